#include "writers/kineto_inputs.h"

#include <algorithm>
#include <optional>
#include <nlohmann/json.hpp>

namespace chakrashim::writers {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The items of "A,Tensor(long int),GenericList[Int,Int]": split at the
// commas outside brackets and parentheses.
std::vector<std::string_view> top_level_items(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t from = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[' || s[i] == '(') ++depth;
    else if (s[i] == ']' || s[i] == ')') --depth;
    else if (s[i] == ',' && depth == 0) {
      out.push_back(s.substr(from, i - from));
      from = i + 1;
    }
  }
  if (!s.empty()) out.push_back(s.substr(from));
  return out;
}

bool is_scalar(std::string_view t) { return t == "Int" || t == "Double" || t == "Bool"; }

// "Tensor(float)" -> "float"; "" when not a defined tensor.
std::string_view tensor_dtype(std::string_view t) {
  if (!starts_with(t, "Tensor(") || t.back() != ')') return {};
  const std::string_view dtype = t.substr(7, t.size() - 8);
  return starts_with(dtype, "nullptr") ? std::string_view() : dtype;  // an undefined tensor
}

// A JSON string's text -> its value. The ET writer's type texts have no
// escapes but in odd dtype or tag names: those take the parser's way.
std::optional<std::string> unquoted(const std::string& json) {
  if (json.size() >= 2 && json.front() == '"' && json.back() == '"' &&
      json.find('\\') == std::string::npos && json.find('"', 1) == json.size() - 1)
    return json.substr(1, json.size() - 2);
  const auto parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_string()) return std::nullopt;
  return parsed.get<std::string>();
}

// A string as JSON text; the plain case (dtype names) without the library.
std::string quoted(const std::string& s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x80;
  });
  if (plain) return '"' + s + '"';
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// One input: (Input type, Input Dims) from the ET's type and shape texts.
std::pair<std::string, std::string> one_input(const std::string& et_type_json, const std::string& et_shape) {
  const auto parsed = unquoted(et_type_json);
  if (!parsed) return {"", "[]"};
  const std::string& type = *parsed;
  if (const auto dtype = tensor_dtype(type); !dtype.empty()) return {std::string(dtype), et_shape};
  if (is_scalar(type)) return {"Scalar", "[]"};
  if (starts_with(type, "GenericList[") && type.back() == ']') {
    const auto items = top_level_items(std::string_view(type).substr(12, type.size() - 13));
    if (std::all_of(items.begin(), items.end(), is_scalar)) return {"ScalarList", "[]"};  // empty too
    if (std::all_of(items.begin(), items.end(), [](std::string_view i) { return !tensor_dtype(i).empty(); }))
      return {"TensorList", et_shape};
  }
  return {"", "[]"};
}

}  // namespace

KinetoInputs kineto_inputs(const std::vector<std::string>& et_shapes, const std::vector<std::string>& et_types) {
  KinetoInputs out;
  out.dims = "[";
  out.types = "[";
  for (std::size_t i = 0; i < et_types.size(); ++i) {
    const auto [type, dims] = one_input(et_types[i], i < et_shapes.size() ? et_shapes[i] : std::string("[]"));
    if (i) {
      out.dims += ',';
      out.types += ',';
    }
    out.dims += dims;
    out.types += quoted(type);
  }
  out.dims += ']';
  out.types += ']';
  return out;
}

void InputsByRfId::add(std::uint64_t rf_id, KinetoInputs inputs) {
  std::string key = inputs.dims + '\n' + inputs.types;
  auto [it, fresh] = index_.try_emplace(std::move(key), static_cast<std::uint32_t>(texts_.size()));
  if (fresh) {
    // Checked once per distinct text, so the device trace can write them
    // raw and stay valid JSON whatever the ET held.
    if (!nlohmann::json::accept(inputs.dims) || !nlohmann::json::accept(inputs.types)) inputs = {"[]", "[]"};
    texts_.push_back(std::move(inputs));
  }
  by_rf_.emplace_back(rf_id, it->second);
}

void InputsByRfId::seal() {
  std::sort(by_rf_.begin(), by_rf_.end());
  index_ = {};
}

const KinetoInputs* InputsByRfId::find(std::uint64_t rf_id) const {
  const auto it = std::lower_bound(by_rf_.begin(), by_rf_.end(), std::make_pair(rf_id, std::uint32_t{0}));
  return it != by_rf_.end() && it->first == rf_id ? &texts_[it->second] : nullptr;
}

}  // namespace chakrashim::writers
