#include "link/json_text.h"

#include "json/json_emitter.h"

namespace chakrashim::tools::link {

void append_quoted(std::string& out, std::string_view text) {
  out.push_back('"');
  writers::append_escaped(out, text);
  out.push_back('"');
}

void JsonText::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_->push_back(',');
    first_.back() = false;
  }
}

void JsonText::key(std::string_view k) {
  if (!first_.back()) out_->push_back(',');
  first_.back() = false;
  append_quoted(*out_, k);
  out_->push_back(':');
  after_key_ = true;
}

void JsonText::scalar_raw(std::string_view text) {
  before_value();
  out_->append(text);
}

void JsonText::scalar_string(std::string_view text) {
  before_value();
  append_quoted(*out_, text);
}

void JsonText::open(bool object) {
  before_value();
  out_->push_back(object ? '{' : '[');
  first_.push_back(true);
}

void JsonText::close(bool object) {
  out_->push_back(object ? '}' : ']');
  first_.pop_back();
}

}  // namespace chakrashim::tools::link
