// Kineto's "Input Dims" and "Input type" args of a cpu_op, from the ET
// node's inputs for the same op (docs/trace-format.md, "Input shapes"), as
// torch.profiler(record_shapes=True) writes them for torch 2.13:
//   ET type (JSON text)                      Input type     Input Dims
//   "Tensor(float)"                           "float"        its shape, [8,16]
//   "GenericList[Tensor(float),Tensor(float)]" "TensorList"  the shapes, [[2,4],[2,4]]
//   "GenericList[Int,Int]", "GenericList[]"   "ScalarList"   []
//   "Int", "Double", "Bool"                   "Scalar"       []
//   an undefined tensor, anything else        ""             []
//   (None, String, Device, Tuple, ...)
// The writer thread computes them from the native recorder's ET after the
// window, so the training thread pays nothing for them. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace chakrashim::writers {

struct KinetoInputs {
  std::string dims;   // a JSON array: "[[8,16],[],[[2,4],[2,4]]]"
  std::string types;  // a JSON array: "[\"float\",\"Scalar\",\"TensorList\"]"
};

// From an ET node's input arrays: each shape and type as the ET's JSON text.
KinetoInputs kineto_inputs(const std::vector<std::string>& et_shapes, const std::vector<std::string>& et_types);

// rf_id -> its op's inputs, filled by the ET writer and read by the device
// trace's: the texts are kept once, however many ops share them, and are
// valid JSON (checked once each: "[]" where one is not).
class InputsByRfId {
 public:
  void add(std::uint64_t rf_id, KinetoInputs inputs);
  // Sorts what was added; call once, before find().
  void seal();
  const KinetoInputs* find(std::uint64_t rf_id) const;
  std::size_t size() const { return by_rf_.size(); }

 private:
  std::vector<KinetoInputs> texts_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> by_rf_;  // (rf_id, index into texts_)
  std::unordered_map<std::string, std::uint32_t> index_;        // dims + '\n' + types -> texts_; dropped at seal
};

}  // namespace chakrashim::writers
