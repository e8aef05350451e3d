// Lets run-store rows travel through queued signals between the run thread and the UI.
#pragma once

#include <QMetaType>
#include <vector>

#include "storage/records.h"

Q_DECLARE_METATYPE(ranklab::RankRow)
Q_DECLARE_METATYPE(ranklab::StepRow)
Q_DECLARE_METATYPE(ranklab::ServerLoadRow)
Q_DECLARE_METATYPE(ranklab::EvalRow)
Q_DECLARE_METATYPE(ranklab::EventRow)
Q_DECLARE_METATYPE(ranklab::RunRow)
Q_DECLARE_METATYPE(ranklab::RunSummary)
Q_DECLARE_METATYPE(std::vector<ranklab::StepRow>)
Q_DECLARE_METATYPE(std::vector<ranklab::RankRow>)
Q_DECLARE_METATYPE(ranklab::StepWindow)

namespace ranklab {

// Call once before the first queued connection; safe to call again.
void registerRecordMetaTypes();

}  // namespace ranklab
