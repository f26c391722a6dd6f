// TEMPORARY skeleton; replaced by the real pass.
#include "dtensor/Transforms/Passes.h"
namespace dtensor {
#define GEN_PASS_DEF_FUSECOLLECTIVES
#include "dtensor/Transforms/Passes.h.inc"
} // namespace dtensor
namespace {
struct FuseCollectivesPass : dtensor::impl::FuseCollectivesBase<FuseCollectivesPass> {
  void runOnOperation() override {}
};
} // namespace
