// TEMPORARY skeleton; replaced by the real pass.
#include "dtensor/Transforms/Passes.h"
namespace dtensor {
#define GEN_PASS_DEF_COMMREPORT
#include "dtensor/Transforms/Passes.h.inc"
} // namespace dtensor
namespace {
struct CommReportPass : dtensor::impl::CommReportBase<CommReportPass> {
  void runOnOperation() override {}
};
} // namespace
