// Unit tests for shim/src/writers/kineto_inputs.h: an ET node's inputs as
// Kineto's "Input Dims" and "Input type" (torch.profiler's record_shapes).
#include "writers/kineto_inputs.h"

#include <gtest/gtest.h>

namespace chakrashim::writers {
namespace {

TEST(KinetoInputs, TensorsScalarsAndListsAsTorchProfilerWritesThem) {
  // aten::cat(tensors, dim), aten::view(self, size), aten::embedding(...)
  const KinetoInputs cat = kineto_inputs({"[[32],[32]]", "[]"},
                                         {"\"GenericList[Tensor(long int),Tensor(long int)]\"", "\"Int\""});
  EXPECT_EQ(cat.dims, "[[[32],[32]],[]]");
  EXPECT_EQ(cat.types, "[\"TensorList\",\"Scalar\"]");
  const KinetoInputs view = kineto_inputs({"[512,64]", "[[],[],[]]"},
                                          {"\"Tensor(float)\"", "\"GenericList[Int,Int,Int]\""});
  EXPECT_EQ(view.dims, "[[512,64],[]]");
  EXPECT_EQ(view.types, "[\"float\",\"ScalarList\"]");
  const KinetoInputs misc = kineto_inputs({"[]", "[]", "[]", "[]", "[]", "[]", "[]"},
                                          {"\"None\"", "\"Bool\"", "\"Double\"", "\"Device\"", "\"String\"",
                                           "\"GenericList[]\"", "\"Tensor(nullptr (uninitialized))\""});
  EXPECT_EQ(misc.dims, "[[],[],[],[],[],[],[]]");
  EXPECT_EQ(misc.types, "[\"\",\"Scalar\",\"Scalar\",\"\",\"\",\"ScalarList\",\"\"]");
}

TEST(KinetoInputs, NestedAndMixedListsAreNeitherTensorListsNorScalarLists) {
  const KinetoInputs k = kineto_inputs({"[[[2],[3]],[]]", "[[4],[]]"},
                                       {"\"GenericList[GenericList[Tensor(float),Tensor(float)],Int]\"",
                                        "\"GenericList[Tensor(float),Int]\""});
  EXPECT_EQ(k.types, "[\"\",\"\"]");
  EXPECT_EQ(k.dims, "[[],[]]");
}

TEST(KinetoInputs, ATypeThatIsNotAJsonStringGivesAnEmptyEntry) {
  const KinetoInputs k = kineto_inputs({"[2]"}, {"Tensor(float)"});
  EXPECT_EQ(k.types, "[\"\"]");
  EXPECT_EQ(k.dims, "[[]]");
  EXPECT_EQ(kineto_inputs({}, {}).dims, "[]");
}

TEST(KinetoInputs, FoundByRfIdAndKeptOncePerDistinctText) {
  InputsByRfId by;
  by.add(30, kineto_inputs({"[2]"}, {"\"Tensor(float)\""}));
  by.add(10, kineto_inputs({"[2]"}, {"\"Tensor(float)\""}));
  by.add(20, kineto_inputs({"[]"}, {"\"Int\""}));
  by.seal();
  ASSERT_NE(by.find(10), nullptr);
  EXPECT_EQ(by.find(10), by.find(30)) << "one text for both";
  EXPECT_EQ(by.find(20)->types, "[\"Scalar\"]");
  EXPECT_EQ(by.find(15), nullptr);
  EXPECT_EQ(by.find(99), nullptr);
  EXPECT_EQ(by.size(), 3u);
}

TEST(KinetoInputs, EscapedTypeNamesStayEscaped) {
  const KinetoInputs k = kineto_inputs({"[1]"}, {"\"Tensor(odd\\\"dtype)\""});
  EXPECT_EQ(k.types, "[\"odd\\\"dtype\"]");
}

TEST(KinetoInputs, TextsThatAreNotJsonAreKeptAsEmptyArrays) {
  InputsByRfId by;
  by.add(1, KinetoInputs{"[[1,", "[\"float\"]"});
  by.seal();
  ASSERT_NE(by.find(1), nullptr);
  EXPECT_EQ(by.find(1)->dims, "[]");
  EXPECT_EQ(by.find(1)->types, "[]");
}

}  // namespace
}  // namespace chakrashim::writers
