// TEMPORARY skeleton; replaced by the real pass.
#include "dtensor/Transforms/Passes.h"
namespace dtensor {
#define GEN_PASS_DEF_PARTITION
#include "dtensor/Transforms/Passes.h.inc"
} // namespace dtensor
namespace {
struct PartitionPass : dtensor::impl::PartitionBase<PartitionPass> {
  void runOnOperation() override {}
};
} // namespace
