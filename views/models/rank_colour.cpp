#include "views/models/rank_colour.h"

#include <array>

namespace ranklab {

QColor rankColour(int rank) {
  // Tableau 10: distinguishable on white, and in most colour-vision deficiencies.
  static const std::array<QColor, 10> palette = {
      QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
      QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
      QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f), QColor(0xbc, 0xbd, 0x22),
      QColor(0x17, 0xbe, 0xcf)};
  if (rank < 0) return QColor(0x55, 0x55, 0x55);
  return palette[size_t(rank) % palette.size()];
}

QColor phaseColour(int phase) {
  static const std::array<QColor, 7> colours = {QColor(0x9e, 0xb9, 0xd4),   // data
                                                QColor(0x4c, 0x78, 0xa8),   // forward
                                                QColor(0x2a, 0x4d, 0x7a),   // backward
                                                QColor(0x9c, 0x75, 0xb8),   // compress
                                                QColor(0xe4, 0x57, 0x56),   // wait
                                                QColor(0xf5, 0x85, 0x18),   // comm
                                                QColor(0x54, 0xa2, 0x4b)};  // update
  return phase >= 0 && phase < int(colours.size()) ? colours[size_t(phase)] : QColor(Qt::gray);
}

}  // namespace ranklab
