//===- FaultSettingTest.cpp - Parsing DTENSOR_TEST_FAULT ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The values DTENSOR_TEST_FAULT accepts and the messages of those it
// refuses (runtime/lib/FaultSetting.h). The kill itself is tested end to
// end under MPI (test/E2E/rank-kill.test, test/Server/rank-kill.test).
//
//===----------------------------------------------------------------------===//

#include "FaultSetting.h"

#include <gtest/gtest.h>

using namespace dtensor::rt;

namespace {

std::string refusal(const char *text) {
  FaultSetting setting;
  Status status = parseFaultSetting(text, setting);
  EXPECT_FALSE(status.ok()) << text;
  EXPECT_FALSE(setting.armed) << text;
  return status.message();
}

TEST(FaultSetting, UnsetOrEmptyIsNotArmed) {
  FaultSetting setting;
  EXPECT_TRUE(parseFaultSetting(nullptr, setting).ok());
  EXPECT_FALSE(setting.armed);
  EXPECT_TRUE(parseFaultSetting("", setting).ok());
  EXPECT_FALSE(setting.armed);
}

TEST(FaultSetting, KeysInAnyOrder) {
  FaultSetting setting;
  ASSERT_TRUE(parseFaultSetting("rank=3,step=12,point=compute", setting).ok());
  EXPECT_TRUE(setting.armed);
  EXPECT_EQ(setting.rank, 3);
  EXPECT_EQ(setting.step, 12);
  EXPECT_EQ(setting.point, FaultPoint::Compute);
  ASSERT_TRUE(
      parseFaultSetting("point=collective,step=0,rank=0", setting).ok());
  EXPECT_TRUE(setting.armed);
  EXPECT_EQ(setting.rank, 0);
  EXPECT_EQ(setting.step, 0);
  EXPECT_EQ(setting.point, FaultPoint::Collective);
}

TEST(FaultSetting, MalformedValuesNameTheirPart) {
  const std::string expected =
      "; expected rank=R,step=K,point=collective|compute";
  EXPECT_EQ(refusal("rank=1,step=2"),
            "DTENSOR_TEST_FAULT=\"rank=1,step=2\": missing point" + expected);
  EXPECT_EQ(refusal("rank=1,step=-2,point=compute"),
            "DTENSOR_TEST_FAULT=\"rank=1,step=-2,point=compute\": step '-2' "
            "is not an integer >= 0" + expected);
  EXPECT_EQ(refusal("rank=x,step=2,point=compute"),
            "DTENSOR_TEST_FAULT=\"rank=x,step=2,point=compute\": rank 'x' is "
            "not a rank (an integer >= 0)" + expected);
  EXPECT_EQ(refusal("rank=1,step=2,point=io"),
            "DTENSOR_TEST_FAULT=\"rank=1,step=2,point=io\": point 'io' is not "
            "collective or compute" + expected);
  EXPECT_EQ(refusal("rank=1,rank=2,step=2,point=compute"),
            "DTENSOR_TEST_FAULT=\"rank=1,rank=2,step=2,point=compute\": rank "
            "is given twice" + expected);
  EXPECT_EQ(refusal("rank=1,step=2,point=compute,signal=9"),
            "DTENSOR_TEST_FAULT=\"rank=1,step=2,point=compute,signal=9\": "
            "unknown key 'signal'" + expected);
  EXPECT_EQ(refusal("rank=1,,step=2,point=compute"),
            "DTENSOR_TEST_FAULT=\"rank=1,,step=2,point=compute\": '' is not "
            "key=value" + expected);
  EXPECT_EQ(refusal("rank=99999999999,step=2,point=compute"),
            "DTENSOR_TEST_FAULT=\"rank=99999999999,step=2,point=compute\": "
            "rank '99999999999' is not a rank (an integer >= 0)" + expected);
}

} // namespace
