//===- RuntimeMpiTest.cpp - The runtime on several MPI ranks --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Run under mpirun with any number of ranks (scripts/test.sh uses 1 to 4).
// The collectives are called through the ABI inside a step of a test
// artifact and checked against their definitions; GLOBAL set/get round
// trips and the agreement of failures are checked through the C API. Only
// rank 0 prints; a failure on any rank fails the binary.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "dtensor/Formats/DType.h"
#include "dtensor/Formats/Random.h"
#include "dtensor/Formats/Safetensors.h"
#include "dtensor/Layout/LayoutMath.h"

#include <mpi.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <set>

// Counts the heap allocations made through operator new while `counting`
// is set (the runtime's C++ allocations; MPI's own, through malloc, are
// not ours to remove and are not counted).
namespace {
std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};
} // namespace

void *operator new(size_t bytes) {
  if (counting.load(std::memory_order_relaxed))
    allocations.fetch_add(1, std::memory_order_relaxed);
  if (void *memory = std::malloc(bytes ? bytes : 1))
    return memory;
  throw std::bad_alloc();
}
// The nothrow forms too (std::stable_sort's temporary buffer uses them):
// memory from any form must reach the free below, never a sanitizer's
// own operator new.
void *operator new(size_t bytes, const std::nothrow_t &) noexcept {
  try {
    return ::operator new(bytes);
  } catch (const std::bad_alloc &) {
    return nullptr;
  }
}
void operator delete(void *memory) noexcept { std::free(memory); }
void operator delete(void *memory, size_t) noexcept { std::free(memory); }
void operator delete(void *memory, const std::nothrow_t &) noexcept {
  std::free(memory);
}

using namespace dtensor::rt;
using namespace dtensor::rt::test;
using dtensor::layout::chunkRange;
using dtensor::layout::Mesh;

namespace {

dtensor_context *context = nullptr;
dtensor_program *program = nullptr;
std::string artifact;
int rank = 0, size = 1;

// Group ids of the test manifest.
constexpr int64_t kWorld = 0;
constexpr int64_t kFirst2D = 1; // 2x2 groups follow when size == 4

/// A manifest for this world: one mesh "world" of every rank.
Manifest worldManifest() {
  Manifest manifest;
  manifest.worldSize = size;
  std::vector<int64_t> ids(size);
  for (int i = 0; i < size; ++i)
    ids[i] = i;
  manifest.meshes.push_back({"world", {size}, {}, ids});
  return manifest;
}

class MpiEnvironment : public ::testing::Environment {
public:
  void SetUp() override {
    ASSERT_EQ(dtensor_context_create(nullptr, &context), DTENSOR_OK)
        << dtensor_last_error();
    char dir[64] = "/tmp/dtensor-mpi-test-XXXXXX";
    if (rank == 0)
      ASSERT_NE(mkdtemp(dir), nullptr);
    MPI_Bcast(dir, sizeof(dir), MPI_CHAR, 0, MPI_COMM_WORLD);
    Manifest manifest = worldManifest();
    manifest.groups.push_back({0, {0}});
    if (size == 4) {
      manifest.meshes.push_back({"grid", {2, 2}, {"dp", "tp"}, {3, 1, 0, 2}});
      for (std::vector<int64_t> dims :
           std::vector<std::vector<int64_t>>{{0}, {1}, {0, 1}, {1, 0}})
        manifest.groups.push_back({1, dims});
    }
    manifest.entry = "callback";
    manifest.tensors = {tensor("x", TensorRole::Input, {10, 3}, {"S(0)"}),
                        tensor("p", TensorRole::Input, {5, 2}, {"P(sum)"}),
                        tensor("q", TensorRole::Weight, {5, 2}, {"P(max)"}),
                        tensor("y", TensorRole::Output, {10, 3}, {"S(1)"})};
    if (rank == 0)
      artifact = writeArtifact(dir, "artifact", manifest);
    MPI_Barrier(MPI_COMM_WORLD);
    artifact = std::string(dir) + "/artifact";
    ASSERT_EQ(
        dtensor_program_load(context, artifact.c_str(), nullptr, &program),
        DTENSOR_OK)
        << dtensor_last_error();
  }
  void TearDown() override {
    EXPECT_EQ(dtensor_program_destroy(program), DTENSOR_OK);
    EXPECT_EQ(dtensor_context_destroy(context), DTENSOR_OK);
    if (rank == 0)
      std::filesystem::remove_all(
          std::filesystem::path(artifact).parent_path());
  }
};

/// Runs `body` as the step of the test program; expects success.
void runStep(std::function<void()> body) {
  setStepBody(artifact, [&](void **) { body(); });
  ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK) << dtensor_last_error();
}

/// The value element `i` of rank `r` contributes in the reduction tests.
double contribution(int r, int64_t i) {
  return double((r * 7 + i * 3) % 11) - 5;
}

template <typename T> T encode(double value, int32_t dtype) {
  if (dtype == DTENSOR_RT_F16)
    return static_cast<T>(floatToHalf(static_cast<float>(value)));
  if (dtype == DTENSOR_RT_BF16)
    return static_cast<T>(floatToBf16(static_cast<float>(value)));
  if (dtype == DTENSOR_RT_BOOL)
    return static_cast<T>(value > 0);
  return static_cast<T>(value);
}

template <typename T> void checkAllReduce(int32_t dtype, int32_t reduction) {
  const int64_t n = 9;
  std::vector<T> in(n), out(n);
  for (int64_t i = 0; i < n; ++i)
    in[i] = encode<T>(contribution(rank, i), dtype);
  Memref inRef(in.data(), {3, 3}), outRef(out.data(), {3, 3});
  runStep([&] {
    inRef.push();
    outRef.push();
    dtensor_rt_all_reduce(kWorld, reduction, dtype, 1, 0);
  });
  for (int64_t i = 0; i < n; ++i) {
    double expected = contribution(0, i);
    double sum = 0;
    for (int r = 0; r < size; ++r) {
      double v = contribution(r, i);
      if (dtype == DTENSOR_RT_BOOL)
        v = v > 0;
      sum += v;
      expected = reduction == DTENSOR_RT_MAX   ? std::max(expected, v)
                 : reduction == DTENSOR_RT_MIN ? std::min(expected, v)
                                               : expected;
    }
    if (reduction == DTENSOR_RT_SUM)
      expected = dtype == DTENSOR_RT_BOOL ? sum > 0 : sum;
    if (reduction == DTENSOR_RT_AVG)
      expected = dtype == DTENSOR_RT_I32 || dtype == DTENSOR_RT_I64 ||
                         dtype == DTENSOR_RT_I8
                     ? double(int64_t(sum) / size)
                     : sum / size;
    if (dtype == DTENSOR_RT_BOOL && reduction == DTENSOR_RT_MIN) {
      bool all = true;
      for (int r = 0; r < size; ++r)
        all = all && contribution(r, i) > 0;
      expected = all;
    }
    if (dtype == DTENSOR_RT_BOOL && reduction == DTENSOR_RT_MAX)
      expected = sum > 0;
    EXPECT_EQ(out[i], encode<T>(expected, dtype))
        << "dtype " << dtype << " reduction " << reduction << " element " << i;
  }
}

} // namespace

TEST(RuntimeMpi, AllReduceEveryDtypeAndReduction) {
  for (int32_t reduction : {0, 1, 2, 3}) {
    checkAllReduce<float>(DTENSOR_RT_F32, reduction);
    checkAllReduce<double>(DTENSOR_RT_F64, reduction);
    checkAllReduce<int32_t>(DTENSOR_RT_I32, reduction);
    checkAllReduce<int64_t>(DTENSOR_RT_I64, reduction);
    checkAllReduce<int8_t>(DTENSOR_RT_I8, reduction);
    if (reduction != DTENSOR_RT_AVG) {
      checkAllReduce<uint8_t>(DTENSOR_RT_BOOL, reduction);
    }
    if (reduction != DTENSOR_RT_AVG || size == 1 || size == 2 || size == 4) {
      checkAllReduce<uint16_t>(DTENSOR_RT_F16, reduction);
      checkAllReduce<uint16_t>(DTENSOR_RT_BF16, reduction);
    }
  }
}

TEST(RuntimeMpi, AllGatherUnevenStridedAndVariadic) {
  for (int64_t rows : {10, 2, 0, 7}) {
    // Tensor a: rows x 3, gathered along 0; tensor b: 2 x rows gathered
    // along 1, received into a transposed (column-major) buffer.
    dtensor::layout::Range mine = chunkRange(rows, size, rank);
    std::vector<float> a(mine.size() * 3), b(2 * mine.size());
    for (int64_t i = 0; i < mine.size(); ++i)
      for (int64_t j = 0; j < 3; ++j)
        a[i * 3 + j] = float((mine.begin + i) * 10 + j);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < mine.size(); ++j)
        b[i * mine.size() + j] = float(i * 100 + mine.begin + j);
    std::vector<int64_t> c(mine.size());
    for (int64_t i = 0; i < mine.size(); ++i)
      c[i] = mine.begin + i;
    std::vector<float> gotA(rows * 3), gotB(2 * rows);
    std::vector<int64_t> gotC(rows, -1);
    Memref aIn(a.data(), {mine.size(), 3}), bIn(b.data(), {2, mine.size()});
    Memref cIn(c.data(), {mine.size()}), cOut(gotC.data(), {rows});
    Memref aOut(gotA.data(), {rows, 3});
    Memref bOut(gotB.data(), {2, rows}, {1, 2}); // column-major 2 x rows
    // Two tensors of one dtype in one call (a bucket).
    std::vector<float> cAsFloat(c.begin(), c.end()), gotCFloat(rows, -1);
    Memref cfIn(cAsFloat.data(), {mine.size()}),
        cfOut(gotCFloat.data(), {rows});
    runStep([&] {
      aIn.push();
      cfIn.push();
      aOut.push();
      cfOut.push();
      dtensor_rt_all_gather(kWorld, 0, DTENSOR_RT_F32, 2, 0);
      cIn.push();
      cOut.push();
      dtensor_rt_all_gather(kWorld, 0, DTENSOR_RT_I64, 1, 0);
    });
    runStep([&] {
      bIn.push();
      bOut.push();
      dtensor_rt_all_gather(kWorld, 1, DTENSOR_RT_F32, 1, 0);
    });
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < 3; ++j)
        EXPECT_EQ(gotA[i * 3 + j], float(i * 10 + j)) << rows;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < rows; ++j)
        EXPECT_EQ(gotB[j * 2 + i], float(i * 100 + j)) << rows;
    for (int64_t i = 0; i < rows; ++i) {
      EXPECT_EQ(gotC[i], i);
      EXPECT_EQ(gotCFloat[i], float(i));
    }
  }
}

TEST(RuntimeMpi, ReduceScatterUneven) {
  for (int64_t rows : {10, 3, 0}) {
    std::vector<double> in(rows * 2);
    for (int64_t i = 0; i < rows * 2; ++i)
      in[i] = double((rank + 1) * i);
    dtensor::layout::Range mine = chunkRange(rows, size, rank);
    std::vector<double> out(mine.size() * 2, -1);
    Memref inRef(in.data(), {rows, 2}), outRef(out.data(), {mine.size(), 2});
    runStep([&] {
      inRef.push();
      outRef.push();
      dtensor_rt_reduce_scatter(kWorld, DTENSOR_RT_SUM, 0, DTENSOR_RT_F64, 1,
                                0);
    });
    double factor = size * (size + 1) / 2.0;
    for (int64_t i = 0; i < mine.size() * 2; ++i)
      EXPECT_EQ(out[i], factor * double(mine.begin * 2 + i)) << rows;
  }
}

TEST(RuntimeMpi, AllToAllMovesTheShardedDim) {
  // Global G[r][c] = r * 100 + c, 10 x 7: rows sharded -> columns sharded.
  const int64_t rows = 10, cols = 7;
  dtensor::layout::Range myRows = chunkRange(rows, size, rank),
                         myCols = chunkRange(cols, size, rank);
  std::vector<int32_t> in(myRows.size() * cols), out(rows * myCols.size(), -1);
  for (int64_t i = 0; i < myRows.size(); ++i)
    for (int64_t j = 0; j < cols; ++j)
      in[i * cols + j] = int32_t((myRows.begin + i) * 100 + j);
  Memref inRef(in.data(), {myRows.size(), cols}),
      outRef(out.data(), {rows, myCols.size()});
  runStep([&] {
    inRef.push();
    outRef.push();
    dtensor_rt_all_to_all(kWorld, 1, 0, DTENSOR_RT_I32, 0);
  });
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < myCols.size(); ++j)
      EXPECT_EQ(out[i * myCols.size() + j],
                int32_t(i * 100 + myCols.begin + j));
}

TEST(RuntimeMpi, BroadcastMeshCoordAndGroupSum) {
  std::vector<int64_t> in(4, rank), out(4, -1);
  Memref inRef(in.data(), {4}), outRef(out.data(), {4});
  int64_t coord = -1, sum = -1;
  runStep([&] {
    inRef.push();
    outRef.push();
    dtensor_rt_broadcast(kWorld, size - 1, DTENSOR_RT_I64, 0);
    coord = dtensor_rt_mesh_coord(0, 0);
    sum = dtensor_rt_group_sum(kWorld, rank + 1);
  });
  EXPECT_EQ(out, std::vector<int64_t>(4, size - 1));
  EXPECT_EQ(coord, rank);
  EXPECT_EQ(sum, size * (size + 1) / 2);
}

TEST(RuntimeMpi, StepsDoNotAllocateInTheSteadyState) {
  // A step with a matrix product of strided operands and one of each
  // collective, uneven pieces included: after the first steps have sized
  // the runtime's reusable storage, further steps make no allocation.
  const int64_t rows = 5, cols = 3;
  dtensor::layout::Range mine = chunkRange(rows, size, rank);
  std::vector<float> a(4 * 6, 1.0f), b(3 * 2, 0.5f), c(4 * 2);
  Memref aRef(a.data(), {4, 3}, {6, 2}), bRef(b.data(), {3, 2}),
      cRef(c.data(), {4, 2});
  std::vector<float> piece(mine.size() * cols, float(rank)),
      gathered(rows * cols), summed(rows * cols), scattered(mine.size() * cols),
      sent(4, float(rank)), received(4);
  Memref pieceRef(piece.data(), {mine.size(), cols}),
      gatheredRef(gathered.data(), {rows, cols}),
      gatheredIn(gathered.data(), {rows, cols}),
      summedRef(summed.data(), {rows, cols}),
      summedIn(summed.data(), {rows, cols}),
      scatteredRef(scattered.data(), {mine.size(), cols}),
      sentRef(sent.data(), {4}), receivedRef(received.data(), {4});
  setStepBody(artifact, [&](void **) {
    aRef.push();
    bRef.push();
    cRef.push();
    dtensor_rt_matmul(DTENSOR_RT_F32, 0);
    pieceRef.push();
    gatheredRef.push();
    dtensor_rt_all_gather(kWorld, 0, DTENSOR_RT_F32, 1, 0);
    gatheredIn.push();
    summedRef.push();
    dtensor_rt_wait(
        dtensor_rt_all_reduce(kWorld, DTENSOR_RT_SUM, DTENSOR_RT_F32, 1, 1));
    summedIn.push();
    scatteredRef.push();
    dtensor_rt_reduce_scatter(kWorld, DTENSOR_RT_SUM, 0, DTENSOR_RT_F32, 1, 0);
    sentRef.push();
    receivedRef.push();
    dtensor_rt_broadcast(kWorld, 0, DTENSOR_RT_F32, 0);
  });
  for (int warmup = 0; warmup < 3; ++warmup)
    ASSERT_EQ(dtensor_program_run(program), DTENSOR_OK) << dtensor_last_error();
  allocations = 0;
  counting = true;
  bool ok = true;
  for (int step = 0; step < 20; ++step)
    ok &= dtensor_program_run(program) == DTENSOR_OK;
  counting = false;
  ASSERT_TRUE(ok) << dtensor_last_error();
  EXPECT_EQ(allocations.load(), 0) << "allocations in 20 steps";
  // The step computed what it should.
  EXPECT_EQ(c, std::vector<float>(8, 1.5f));
  EXPECT_EQ(received, std::vector<float>(4, 0.0f));
  for (int64_t i = 0; i < mine.size() * cols; ++i)
    EXPECT_EQ(scattered[i], float(size) * summed[mine.begin * cols + i]);
}

TEST(RuntimeMpi, GroupsOfA2x2MeshWithDeviceIds) {
  if (size != 4)
    GTEST_SKIP() << "needs 4 ranks";
  Mesh mesh({2, 2}, {3, 1, 0, 2});
  std::vector<int64_t> coord = *mesh.coordOfDevice(rank);
  std::vector<std::vector<int64_t>> groups = {{0}, {1}, {0, 1}, {1, 0}};
  for (size_t g = 0; g < groups.size(); ++g) {
    auto members = mesh.groupMembers(groups[g], coord);
    std::vector<int32_t> in{rank}, out(members.size(), -1);
    Memref inRef(in.data(), {1}),
        outRef(out.data(), {static_cast<int64_t>(members.size())});
    int64_t dp = -1, tp = -1;
    runStep([&] {
      inRef.push();
      outRef.push();
      dtensor_rt_all_gather(kFirst2D + g, 0, DTENSOR_RT_I32, 1, 0);
      dp = dtensor_rt_mesh_coord(1, 0);
      tp = dtensor_rt_mesh_coord(1, 1);
    });
    for (size_t j = 0; j < members.size(); ++j)
      EXPECT_EQ(out[j], mesh.deviceAt(members[j])) << "group " << g;
    EXPECT_EQ(dp, coord[0]);
    EXPECT_EQ(tp, coord[1]);
  }
}

TEST(RuntimeMpi, GlobalSetGetRoundTripsWithPartials) {
  std::vector<float> x(30), p(10), q(10);
  for (int i = 0; i < 30; ++i)
    x[i] = float(i) * 0.5f;
  for (int i = 0; i < 10; ++i)
    p[i] = q[i] = float(i) - 3;
  int64_t xShape[] = {10, 3}, pShape[] = {5, 2};
  ASSERT_EQ(dtensor_program_set(program, "x", DTENSOR_GLOBAL, DTENSOR_F32, 2,
                                xShape, x.data(), sizeof(float) * 30),
            DTENSOR_OK);
  ASSERT_EQ(dtensor_program_set(program, "p", DTENSOR_GLOBAL, DTENSOR_F32, 2,
                                pShape, p.data(), sizeof(float) * 10),
            DTENSOR_OK);
  ASSERT_EQ(dtensor_program_set(program, "q", DTENSOR_GLOBAL, DTENSOR_F32, 2,
                                pShape, q.data(), sizeof(float) * 10),
            DTENSOR_OK);
  for (int root : {-1, 0, size - 1}) {
    bool receives = root == -1 || root == rank;
    std::vector<float> gx(30, -1), gp(10, -1), gq(10, -1);
    ASSERT_EQ(dtensor_program_get(program, "x", DTENSOR_GLOBAL, root,
                                  receives ? gx.data() : nullptr,
                                  receives ? sizeof(float) * 30 : 0),
              DTENSOR_OK)
        << dtensor_last_error();
    ASSERT_EQ(dtensor_program_get(program, "p", DTENSOR_GLOBAL, root,
                                  receives ? gp.data() : nullptr,
                                  receives ? sizeof(float) * 10 : 0),
              DTENSOR_OK);
    ASSERT_EQ(dtensor_program_get(program, "q", DTENSOR_GLOBAL, root,
                                  receives ? gq.data() : nullptr,
                                  receives ? sizeof(float) * 10 : 0),
              DTENSOR_OK);
    if (receives) {
      EXPECT_EQ(gx, x);
      EXPECT_EQ(gp, p);
      EXPECT_EQ(gq, q);
    }
  }
  // Partial(sum): the first member holds the value, the others zeros.
  std::vector<float> local(10, -1);
  ASSERT_EQ(dtensor_program_get(program, "p", DTENSOR_LOCAL, 0, local.data(),
                                sizeof(float) * 10),
            DTENSOR_OK);
  EXPECT_EQ(local, rank == 0 ? p : std::vector<float>(10, 0.0f));
  dtensor_tensor_info info;
  ASSERT_EQ(dtensor_program_tensor_info(program, 0, &info), DTENSOR_OK);
  EXPECT_EQ(info.local_shape[0], chunkRange(10, size, rank).size());
  EXPECT_EQ(info.local_offset[0], chunkRange(10, size, rank).begin);
  EXPECT_STREQ(info.placements, "[S(0)]");
}

TEST(RuntimeMpi, RandomFillIsTheSameGlobalTensorOnAnyWorld) {
  ASSERT_EQ(dtensor_program_fill(program, "x", DTENSOR_RANDN, 0, 1234),
            DTENSOR_OK);
  std::vector<float> global(30), expected(30);
  ASSERT_EQ(dtensor_program_get(program, "x", DTENSOR_GLOBAL, -1, global.data(),
                                sizeof(float) * 30),
            DTENSOR_OK);
  ASSERT_EQ(fillBox(Factory::Randn, 0, 1234, DType::F32, {10, 3}, {0, 0},
                    {10, 3}, expected.data()),
            "");
  EXPECT_EQ(global, expected);
}

TEST(RuntimeMpi, TracingRecordsStepsAndTheirCollectives) {
  const dtensor_trace_event *events = nullptr;
  int32_t count = -1;
  EXPECT_EQ(dtensor_program_set_tracing(nullptr, 1),
            DTENSOR_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dtensor_program_trace(program, nullptr, &count),
            DTENSOR_ERR_INVALID_ARGUMENT);
  std::vector<float> in(6, 1.0f), out(6 * size);
  Memref inRef(in.data(), {2, 3}), outRef(out.data(), {2 * size, 3});
  std::vector<float> sum(6, 1.0f), summed(6);
  Memref sumIn(sum.data(), {6}), sumOut(summed.data(), {6});
  auto step = [&] {
    runStep([&] {
      inRef.push();
      outRef.push();
      // The gather is site 3; the reduction has none announced.
      dtensor_rt_collective_site(3);
      dtensor_rt_all_gather(kWorld, 0, DTENSOR_RT_F32, 1, 0);
      sumIn.push();
      sumOut.push();
      dtensor_rt_all_reduce(kWorld, DTENSOR_RT_SUM, DTENSOR_RT_F32, 1, 0);
    });
  };
  // Off (the default): nothing is recorded.
  step();
  ASSERT_EQ(dtensor_program_trace(program, &events, &count), DTENSOR_OK);
  EXPECT_EQ(count, 0);

  // On: per step its collectives in call order, then the step, each with
  // its group, input bytes and an interval inside the step's.
  ASSERT_EQ(dtensor_program_set_tracing(program, 1), DTENSOR_OK);
  step();
  step();
  ASSERT_EQ(dtensor_program_trace(program, &events, &count), DTENSOR_OK);
  ASSERT_EQ(count, 6);
  for (int64_t s = 0; s < 2; ++s) {
    const dtensor_trace_event *gather = &events[3 * s],
                              *reduce = &events[3 * s + 1],
                              *whole = &events[3 * s + 2];
    EXPECT_STREQ(gather->name, "all_gather");
    EXPECT_STREQ(reduce->name, "all_reduce");
    EXPECT_STREQ(whole->name, "step");
    for (const dtensor_trace_event *e : {gather, reduce, whole})
      EXPECT_EQ(e->step, s);
    EXPECT_EQ(gather->group, kWorld);
    EXPECT_EQ(gather->bytes, 6 * 4);
    EXPECT_EQ(reduce->bytes, 6 * 4);
    EXPECT_EQ(whole->group, -1);
    EXPECT_EQ(whole->bytes, 0);
    // Sites as announced; bytes sent under the report's ring model:
    // (n - 1) pieces of 2x3 f32 for the gather, 2 (n - 1) pieces of
    // ceil(6 / n) f32 for the reduction.
    EXPECT_EQ(gather->site, 3);
    EXPECT_EQ(reduce->site, -1);
    EXPECT_EQ(whole->site, -1);
    EXPECT_EQ(gather->bytes_sent, (size - 1) * 6 * 4);
    EXPECT_EQ(reduce->bytes_sent, 2 * (size - 1) * ((6 + size - 1) / size) * 4);
    EXPECT_EQ(whole->bytes_sent, 0);
    EXPECT_LE(whole->start_us, gather->start_us);
    EXPECT_LE(gather->start_us, gather->end_us);
    EXPECT_LE(gather->end_us, reduce->start_us);
    EXPECT_LE(reduce->end_us, whole->end_us);
  }

  // Switching it on again forgets; off records nothing more.
  ASSERT_EQ(dtensor_program_set_tracing(program, 1), DTENSOR_OK);
  ASSERT_EQ(dtensor_program_trace(program, &events, &count), DTENSOR_OK);
  EXPECT_EQ(count, 0);
  ASSERT_EQ(dtensor_program_set_tracing(program, 0), DTENSOR_OK);
  step();
  ASSERT_EQ(dtensor_program_trace(program, &events, &count), DTENSOR_OK);
  EXPECT_EQ(count, 0);
}

TEST(RuntimeMpi, OneRankFailingFailsEveryRank) {
  std::vector<float> x(30);
  int64_t shape[] = {10, 3}, wrong[] = {3, 10};
  bool failing = rank == size - 1;
  dtensor_status status = dtensor_program_set(
      program, "x", DTENSOR_GLOBAL, DTENSOR_F32, 2, failing ? wrong : shape,
      x.data(), sizeof(float) * 30);
  std::string message = dtensor_last_error();
  if (failing) {
    EXPECT_EQ(status, DTENSOR_ERR_INVALID_ARGUMENT);
  } else {
    EXPECT_EQ(status, DTENSOR_ERR_PEER);
    EXPECT_NE(message.find("rank " + std::to_string(size - 1) + " failed"),
              std::string::npos)
        << message;
  }
  EXPECT_NE(message.find("shape [3, 10] given, expected [10, 3]"),
            std::string::npos)
      << message;
}

// Ranks that open different versions of a weights file (one replaced
// between their opens; here the last rank is given another file) are
// refused on every rank before any of them reads a weight; the same file
// everywhere loads.
TEST(RuntimeMpi, WeightsOfDifferentVersionsAreRefusedOnEveryRank) {
  if (size < 2)
    GTEST_SKIP() << "needs two ranks";
  std::string dir = std::filesystem::path(artifact).parent_path();
  std::vector<float> q(10, 1.0f);
  std::string same = dir + "/q.safetensors";
  std::string other = dir + "/q-" + std::to_string(rank) + ".safetensors";
  if (rank == 0)
    ASSERT_EQ(writeSafetensors(same, {{"q", DType::F32, {5, 2}, q.data()}}),
              "");
  ASSERT_EQ(writeSafetensors(other, {{"q", DType::F32, {5, 2}, q.data()}},
                             {{"version", "rank " + std::to_string(rank)}}),
            "");
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string &mine = rank == size - 1 ? other : same;
  EXPECT_EQ(dtensor_program_load_weights(program, mine.c_str()),
            DTENSOR_ERR_WEIGHTS);
  std::string message = dtensor_last_error();
  EXPECT_NE(message.find("the ranks opened different versions of the file"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("nothing was read"), std::string::npos) << message;
  EXPECT_EQ(dtensor_program_load_weights(program, same.c_str()), DTENSOR_OK)
      << dtensor_last_error();
}

TEST(RuntimeMpi, RowWritesOutsideTheCacheOnOneRankAreRefusedOnAll) {
  // The test program's "write_rows" entry: values [2, 2, 3] into the state
  // cache [4, 8, 3], sharded on its last dim, at replicated slots and
  // positions.
  Manifest manifest = worldManifest();
  manifest.entry = "write_rows";
  manifest.tensors = {
      tensor("values", TensorRole::Input, {2, 2, 3}, {"S(2)"}),
      tensor("slots", TensorRole::Input, {2}, {"R"}, 0, DType::I64),
      tensor("positions", TensorRole::Input, {2}, {"R"}, 0, DType::I32),
      tensor("cache", TensorRole::State, {4, 8, 3}, {"S(2)"})};
  for (int i = 0; i < 3; ++i)
    manifest.tensors[i].entry = "write_rows";
  manifest.entries = {{"write_rows", {0, 1, 2, 3}, {}, {}}};
  manifest.entries[0].rowWrites = {{"cache", "slots", "positions", 2, 4, 8}};
  std::string dir = std::filesystem::path(artifact).parent_path().string();
  if (rank == 0)
    writeArtifact(dir, "row-writes", manifest);
  MPI_Barrier(MPI_COMM_WORLD);
  dtensor_program *writes = nullptr;
  ASSERT_EQ(dtensor_program_load(context, (dir + "/row-writes").c_str(),
                                 nullptr, &writes),
            DTENSOR_OK)
      << dtensor_last_error();
  std::vector<float> values(12, 1.0f);
  int64_t valuesShape[] = {2, 2, 3}, indexShape[] = {2};
  ASSERT_EQ(dtensor_program_set(writes, "values", DTENSOR_GLOBAL, DTENSOR_F32,
                                3, valuesShape, values.data(), 48),
            DTENSOR_OK);
  // Each rank gives its own copy of the replicated indices (a misuse of the
  // API): only the last rank's slot is out of range, and the others' rows
  // would be written if their step ran.
  bool failing = rank == size - 1;
  int64_t slots[] = {0, failing ? 4 : 1};
  int32_t positions[] = {0, 3};
  ASSERT_EQ(dtensor_program_set(writes, "slots", DTENSOR_LOCAL, DTENSOR_I64, 1,
                                indexShape, slots, sizeof slots),
            DTENSOR_OK);
  ASSERT_EQ(dtensor_program_set(writes, "positions", DTENSOR_LOCAL,
                                DTENSOR_I32, 1, indexShape, positions,
                                sizeof positions),
            DTENSOR_OK);
  dtensor_status status = dtensor_program_run(writes);
  std::string message = dtensor_last_error();
  EXPECT_EQ(status,
            failing ? DTENSOR_ERR_INVALID_ARGUMENT : DTENSOR_ERR_PEER);
  if (!failing)
    EXPECT_NE(message.find("rank " + std::to_string(size - 1) + " failed"),
              std::string::npos)
        << message;
  EXPECT_NE(message.find("slot out of range: row 1 of input \"slots\" is "
                         "slot 4, the state \"cache\" has 4 slots"),
            std::string::npos)
      << message;
  // No rank ran the step: the whole cache is still zero.
  std::vector<float> cache(4 * 8 * 3, -1.0f);
  ASSERT_EQ(dtensor_program_get(writes, "cache", DTENSOR_GLOBAL, -1,
                                cache.data(), cache.size() * sizeof(float)),
            DTENSOR_OK);
  for (float value : cache)
    EXPECT_EQ(value, 0.0f);

  // Good indices on every rank: the step runs.
  slots[1] = 1;
  ASSERT_EQ(dtensor_program_set(writes, "slots", DTENSOR_LOCAL, DTENSOR_I64, 1,
                                indexShape, slots, sizeof slots),
            DTENSOR_OK);
  ASSERT_EQ(dtensor_program_run(writes), DTENSOR_OK) << dtensor_last_error();
  ASSERT_EQ(dtensor_program_get(writes, "cache", DTENSOR_GLOBAL, -1,
                                cache.data(), cache.size() * sizeof(float)),
            DTENSOR_OK);
  for (int64_t s = 0; s < 4; ++s)
    for (int64_t m = 0; m < 8; ++m)
      for (int64_t d = 0; d < 3; ++d) {
        bool written = (s == 0 && m < 2) || (s == 1 && m >= 3 && m < 5);
        EXPECT_EQ(cache[(s * 8 + m) * 3 + d], written ? 1.0f : 0.0f)
            << s << " " << m << " " << d;
      }
  EXPECT_EQ(dtensor_program_destroy(writes), DTENSOR_OK);
}

namespace {

/// One step's collectives, every one issued with `async` and waited for in
/// reverse order after all were issued (several in flight at once): an
/// uneven all_gather, an in-place all_reduce, an uneven reduce_scatter, an
/// all_to_all, a broadcast and a shift of two tensors. Outputs go to
/// `outputs` (one vector per collective).
struct EveryCollective {
  static constexpr int64_t kRows = 7, kCols = 3;
  std::vector<std::vector<float>> outputs;
  std::vector<int64_t> handles;

  void run(int32_t async) {
    dtensor::layout::Range mine = chunkRange(kRows, size, rank);
    std::vector<float> piece(mine.size() * kCols), reduced(kRows * kCols),
        whole(kRows * kCols), root(4, float(rank + 1)), shifted(8, 0.0f);
    for (size_t i = 0; i < piece.size(); ++i)
      piece[i] = float(rank * 100) + float(i);
    for (size_t i = 0; i < whole.size(); ++i)
      whole[i] = reduced[i] = float((rank + 1) * int(i % 5));
    // The all_to_all moves rows sharded to columns sharded.
    dtensor::layout::Range myCols = chunkRange(kCols, size, rank);
    std::vector<float> swapIn(piece);
    outputs.assign(6, {});
    outputs[0].assign(kRows * kCols, -1);
    outputs[2].assign(mine.size() * kCols, -1);
    outputs[3].assign(kRows * myCols.size(), -1);
    outputs[4].assign(4, -1);
    outputs[5].assign(8, -1);
    // A shift of step 0 over the whole ring: each member's piece of a dim
    // of `size` rows goes to the next member.
    std::vector<float> ring(2 * 4);
    for (size_t i = 0; i < ring.size(); ++i)
      ring[i] = float(rank * 10) + float(i);
    Memref pieceRef(piece.data(), {mine.size(), kCols}),
        gathered(outputs[0].data(), {kRows, kCols}),
        reducedRef(reduced.data(), {kRows, kCols}),
        wholeRef(whole.data(), {kRows, kCols}),
        scattered(outputs[2].data(), {mine.size(), kCols}),
        swapRef(swapIn.data(), {mine.size(), kCols}),
        swapped(outputs[3].data(), {kRows, myCols.size()}),
        rootRef(root.data(), {4}), broadcasted(outputs[4].data(), {4}),
        ring0(ring.data(), {1, 4}), ring1(ring.data() + 4, {1, 4}),
        shifted0(outputs[5].data(), {1, 4}),
        shifted1(outputs[5].data() + 4, {1, 4});
    handles.clear();
    runStep([&] {
      pieceRef.push();
      gathered.push();
      handles.push_back(
          dtensor_rt_all_gather(kWorld, 0, DTENSOR_RT_F32, 1, async));
      reducedRef.push();
      reducedRef.push();
      handles.push_back(dtensor_rt_all_reduce(kWorld, DTENSOR_RT_SUM,
                                              DTENSOR_RT_F32, 1, async));
      wholeRef.push();
      scattered.push();
      handles.push_back(dtensor_rt_reduce_scatter(kWorld, DTENSOR_RT_SUM, 0,
                                                  DTENSOR_RT_F32, 1, async));
      swapRef.push();
      swapped.push();
      handles.push_back(
          dtensor_rt_all_to_all(kWorld, 1, 0, DTENSOR_RT_F32, async));
      rootRef.push();
      broadcasted.push();
      handles.push_back(
          dtensor_rt_broadcast(kWorld, size - 1, DTENSOR_RT_F32, async));
      ring0.push();
      ring1.push();
      shifted0.push();
      shifted1.push();
      handles.push_back(
          dtensor_rt_shift(kWorld, 0, size, 0, DTENSOR_RT_F32, 2, async));
      for (auto h = handles.rbegin(); h != handles.rend(); ++h)
        dtensor_rt_wait(*h);
    });
    outputs[1] = reduced;
  }
};

/// Sets the step to `body` and runs it; the step's status.
dtensor_status runFailingStep(std::function<void()> body) {
  setStepBody(artifact, [&](void **) { body(); });
  return dtensor_program_run(program);
}

} // namespace

TEST(RuntimeMpi, AsyncCollectivesInFlightTogetherMatchSynchronousOnes) {
  EveryCollective synchronous, asynchronous;
  synchronous.run(0);
  ASSERT_EQ(dtensor_program_set_tracing(program, 1), DTENSOR_OK);
  asynchronous.run(1);
  // Synchronous calls return 0; asynchronous ones distinct handles.
  EXPECT_EQ(synchronous.handles, std::vector<int64_t>(6, 0));
  std::set<int64_t> distinct(asynchronous.handles.begin(),
                             asynchronous.handles.end());
  EXPECT_EQ(distinct.size(), 6u);
  EXPECT_EQ(distinct.count(0), 0u);
  for (size_t c = 0; c < synchronous.outputs.size(); ++c)
    EXPECT_EQ(asynchronous.outputs[c], synchronous.outputs[c])
        << "collective " << c;
  // The reference values of two of them: the all_reduce sums every rank's
  // (r + 1) * (i % 5); the broadcast is the last rank's.
  for (int64_t i = 0; i < EveryCollective::kRows * EveryCollective::kCols; ++i)
    EXPECT_EQ(asynchronous.outputs[1][i],
              float(size * (size + 1) / 2 * (i % 5)));
  EXPECT_EQ(asynchronous.outputs[4], std::vector<float>(4, float(size)));

  // The trace: the six collectives in issue order, each marked async and
  // run one after the other on the communication thread, then their six
  // waits in the program's order, then the step.
  const dtensor_trace_event *events = nullptr;
  int32_t count = 0;
  ASSERT_EQ(dtensor_program_trace(program, &events, &count), DTENSOR_OK);
  ASSERT_EQ(count, 13);
  const char *kinds[] = {"all_gather", "all_reduce", "reduce_scatter",
                         "all_to_all", "broadcast",  "shift"};
  for (int c = 0; c < 6; ++c) {
    EXPECT_STREQ(events[c].name, kinds[c]);
    EXPECT_EQ(events[c].async, 1);
    EXPECT_LE(events[c].start_us, events[c].end_us);
    if (c > 0)
      EXPECT_LE(events[c - 1].end_us, events[c].start_us);
    EXPECT_STREQ(events[6 + c].name, "wait");
    EXPECT_EQ(events[6 + c].group, kWorld);
    EXPECT_EQ(events[6 + c].async, 0);
    // Waited in reverse: the wait of collective 5 - c ends after it ran.
    EXPECT_GE(events[6 + c].end_us, events[5 - c].end_us);
  }
  EXPECT_STREQ(events[12].name, "step");
  EXPECT_EQ(events[12].async, 0);
  ASSERT_EQ(dtensor_program_set_tracing(program, 0), DTENSOR_OK);
}

TEST(RuntimeMpi, AsyncCollectiveErrorInFlightFailsTheStepOnEveryRank) {
  // avg of bool tensors fails in the communicator, on the communication
  // thread, after the call returned its handle; the collective issued after
  // it is not run. Every rank reports it at the wait.
  std::vector<uint8_t> flags(4, 1), flagsOut(4, 7);
  std::vector<float> values(4, 1.0f), valuesOut(4, -1.0f);
  Memref flagsIn(flags.data(), {4}), flagsRef(flagsOut.data(), {4}),
      valuesIn(values.data(), {4}), valuesRef(valuesOut.data(), {4});
  int64_t failing = 0, later = 0;
  auto issueBoth = [&] {
    flagsIn.push();
    flagsRef.push();
    failing =
        dtensor_rt_all_reduce(kWorld, DTENSOR_RT_AVG, DTENSOR_RT_BOOL, 1, 1);
    valuesIn.push();
    valuesRef.push();
    later = dtensor_rt_all_reduce(kWorld, DTENSOR_RT_SUM, DTENSOR_RT_F32, 1, 1);
  };
  dtensor_status status = runFailingStep([&] {
    issueBoth();
    dtensor_rt_wait(later);
    dtensor_rt_wait(failing);
  });
  EXPECT_NE(failing, 0);
  EXPECT_NE(later, 0);
  EXPECT_EQ(status, DTENSOR_ERR_INVALID_ARGUMENT);
  std::string message = dtensor_last_error();
  EXPECT_NE(message.find("dtensor_rt_wait"), std::string::npos) << message;
  EXPECT_NE(message.find("all_reduce (in flight): avg is not defined for "
                         "bool tensors"),
            std::string::npos)
      << message;
  EXPECT_EQ(flagsOut, std::vector<uint8_t>(4, 7));
  EXPECT_EQ(valuesOut, std::vector<float>(4, -1.0f));
  // Every rank failed the same way.
  int failed = status == DTENSOR_ERR_INVALID_ARGUMENT, everywhere = 0;
  MPI_Allreduce(&failed, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(everywhere, 1);

  // Not waited for at all: the error is the step's at its end.
  status = runFailingStep(issueBoth);
  EXPECT_EQ(status, DTENSOR_ERR_INVALID_ARGUMENT);
  message = dtensor_last_error();
  EXPECT_NE(message.find("at the end of a step"), std::string::npos) << message;
  EXPECT_NE(message.find("avg is not defined for bool tensors"),
            std::string::npos)
      << message;

  // A handle that is not in flight is an error; the next steps run again.
  status = runFailingStep([&] { dtensor_rt_wait(later); });
  EXPECT_EQ(status, DTENSOR_ERR_RUNTIME);
  EXPECT_NE(std::string(dtensor_last_error())
                .find("is not a collective in "
                      "flight"),
            std::string::npos)
      << dtensor_last_error();
  runStep([&] {
    valuesIn.push();
    valuesRef.push();
    dtensor_rt_wait(
        dtensor_rt_all_reduce(kWorld, DTENSOR_RT_SUM, DTENSOR_RT_F32, 1, 1));
  });
  EXPECT_EQ(valuesOut, std::vector<float>(4, float(size)));
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new MpiEnvironment);
  if (rank != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0, anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && anyFailed && !failed)
    std::fprintf(stderr, "RuntimeMpiTest: a test failed on another rank\n");
  MPI_Finalize();
  return anyFailed;
}
