// Lesson 5: QSGD sends a few bits per gradient element plus a scale per bucket; its
// compression ratio follows from n, the bucket size and the bits.
#include <QObject>
#include <map>

#include "views/lessons/lesson.h"

namespace ranklab {

namespace {

QString compressionText() {
  return QObject::tr(
      "<p>Communication can be cut by sending less than 32 bits per gradient element. "
      "<b>QSGD</b> sends, for each element, its sign and a level from 0 to s = 2<sup>bits−1</sup>"
      " − 1, rounded at random so the average is exact; each bucket of <i>b</i> elements "
      "shares one fp32 scale (its largest |x|). For <i>n</i> elements that is</p>"
      "<p align=center><b>4⌈n/b⌉ + ⌈n · bits / 8⌉</b> bytes instead of <b>4n</b></p>"
      "<p>The price is noise in the gradient: fewer bits, more noise, and possibly lower "
      "accuracy. <b>Error feedback</b> keeps what rounding dropped and adds it to the next "
      "step's gradient, so nothing is lost for good. Top-k and sign send even less; the "
      "compare page sets bytes sent against accuracy across runs.</p>"
      "<p>The preset runs the quickstart MLP (n = 235,146) on 4 ranks with 4-bit QSGD in "
      "buckets of 512. <b>Predict</b> the compression ratio: raw bytes over bytes sent.</p>");
}

LessonAnswer compressionAnswer(const LessonRun& run, const JobSpec& job) {
  LessonAnswer a;
  if (job.compression.codec != "qsgd") {
    a.error = QObject::tr("this lesson needs compression.codec = \"qsgd\"; run %1 used \"%2\"")
                  .arg(run.run.id)
                  .arg(QString::fromStdString(job.compression.codec));
    return a;
  }
  std::map<int, std::vector<double>> ratio;  // raw / sent, each step, by rank
  int64_t params = 0;
  for (const StepRow& s : run.steps) {
    if (s.bytes_tx > 0) ratio[s.rank].push_back(double(s.bytes_raw) / double(s.bytes_tx));
    params = s.mem_params / 4;
  }
  if (ratio.empty() || params <= 0) {
    a.error = QObject::tr("this run sent no bytes");
    return a;
  }
  const int64_t b = job.compression.bucket, bits = job.compression.bits;
  const double payload = 4.0 * double((params + b - 1) / b) + double((params * bits + 7) / 8);
  a.formula = 4.0 * double(params) / payload;
  a.formula_text = QObject::tr("4n / (4⌈n/b⌉ + ⌈n·bits/8⌉), n = %L1, b = %2, bits = %3")
                       .arg(params)
                       .arg(b)
                       .arg(bits);
  QString rows;
  double sum = 0;
  for (const auto& [rank, r] : ratio) {
    sum += medianOf(r);
    rows += QStringLiteral("<tr><td>rank %1</td><td align=right>%2×</td></tr>")
                .arg(rank)
                .arg(medianOf(r), 0, 'f', 4);
  }
  a.measured = sum / double(ratio.size());
  a.detail = QObject::tr(
                 "<p>Each rank's raw bytes (what fp32 would have sent) over the bytes "
                 "it sent, median over the steps:</p><table cellpadding=3>%1</table>"
                 "<p>n = the parameter memory each rank's ledger counted / 4.</p>")
                 .arg(rows);
  return a;
}

}  // namespace

Lesson makeCompressionLesson() {
  return {
      .id = QStringLiteral("compression"),
      .title = QObject::tr("5. Compression: QSGD's ratio"),
      .text = compressionText(),
      .question = QObject::tr("Compression ratio (raw bytes / bytes sent):"),
      .unit = QObject::tr("×"),
      .answer = withJob(compressionAnswer),
  };
}

}  // namespace ranklab
