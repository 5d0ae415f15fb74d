// What convert's unit tests share: a node's attrs as torch writes them, and
// a JSON file of one test case.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace chakrashim::tools::convert {

// The "attrs" key of a node: the six integer attributes and op_schema the
// converter requires, then `extra` (more attribute objects, each led by a
// comma).
inline std::string et_attrs(int rf_id, const std::string& extra = "") {
  return R"("attrs": [{"name": "rf_id", "type": "uint64", "value": )" + std::to_string(rf_id) +
         R"(}, {"name": "fw_parent", "type": "uint64", "value": 0}, {"name": "seq_id", "type": "int64", "value": -1},
         {"name": "scope", "type": "uint64", "value": 0}, {"name": "tid", "type": "uint64", "value": 1},
         {"name": "fw_tid", "type": "uint64", "value": 0}, {"name": "op_schema", "type": "string", "value": "aten::x(Tensor a) -> Tensor"})" +
         extra + "]";
}

// A JSON file of one test case: named by the test and the process (CTest
// runs the cases of a suite in parallel), written with the given text,
// removed at the end.
class TempJsonFile {
 public:
  explicit TempJsonFile(const std::string& prefix)
      : path_(::testing::TempDir() + "/" + prefix + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + std::to_string(::getpid()) +
              ".json") {}
  ~TempJsonFile() { std::remove(path_.c_str()); }
  TempJsonFile(const TempJsonFile&) = delete;
  TempJsonFile& operator=(const TempJsonFile&) = delete;

  // Replaces the file's text; returns its path.
  const std::string& write(const std::string& text) {
    std::ofstream(path_, std::ios::binary) << text;
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace chakrashim::tools::convert
