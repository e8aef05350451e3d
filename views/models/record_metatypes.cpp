#include "views/models/record_metatypes.h"

namespace ranklab {

void registerRecordMetaTypes() {
  qRegisterMetaType<RankRow>();
  qRegisterMetaType<StepRow>();
  qRegisterMetaType<ServerLoadRow>();
  qRegisterMetaType<EvalRow>();
  qRegisterMetaType<EventRow>();
  qRegisterMetaType<RunRow>();
  qRegisterMetaType<RunSummary>();
  qRegisterMetaType<std::vector<StepRow>>();
  qRegisterMetaType<std::vector<RankRow>>();
  qRegisterMetaType<StepWindow>();
}

}  // namespace ranklab
