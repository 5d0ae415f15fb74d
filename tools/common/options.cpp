#include "common/options.h"

#include <cstdio>
#include <utility>

#include "common/usage.h"

namespace chakrashim::tools {

namespace {

bool is_help(std::string_view arg) { return arg == "-h" || arg == "--help"; }

// "-" and "" are arguments; anything else that starts with '-' is an option.
bool looks_like_option(std::string_view arg) { return arg.size() > 1 && arg[0] == '-'; }

}  // namespace

CommandLine::CommandLine(std::string_view command, std::string_view usage) : command_(command), usage_(usage) {}

CommandLine& CommandLine::add(Option option) {
  options_.push_back(std::move(option));
  return *this;
}

CommandLine& CommandLine::flag(std::vector<std::string_view> names, bool& into) {
  return add({std::move(names), Option::Kind::flag, [&into](std::string_view, const std::string&) {
                into = true;
                return std::string();
              }});
}

CommandLine& CommandLine::value(std::vector<std::string_view> names, std::string& into, bool empty_ok) {
  Option option{std::move(names), Option::Kind::value, [&into](std::string_view, const std::string& v) {
                  into = v;
                  return std::string();
                }};
  option.empty_ok = empty_ok;
  return add(std::move(option));
}

CommandLine& CommandLine::value(std::vector<std::string_view> names, TakeValue take) {
  return add({std::move(names), Option::Kind::value, std::move(take)});
}

CommandLine& CommandLine::repeated(std::vector<std::string_view> names, std::vector<std::string>& into) {
  return value(std::move(names), [&into](std::string_view, const std::string& v) {
    into.push_back(v);
    return std::string();
  });
}

CommandLine& CommandLine::ignored(std::vector<std::string_view> names) {
  return value(std::move(names), [](std::string_view, const std::string&) { return std::string(); });
}

CommandLine& CommandLine::refused(std::vector<std::string_view> names, std::string why) {
  Option option{std::move(names), Option::Kind::flag,
                [why = std::move(why)](std::string_view, const std::string&) { return why; }};
  option.offered = false;
  return add(std::move(option));
}

CommandLine& CommandLine::jobs(std::size_t& into) {
  return number({"--jobs"}, 1, 1024, "a number from 1 to 1024", into);
}

CommandLine& CommandLine::positionals(std::vector<std::string>& into, std::size_t min, std::string too_few,
                                      std::size_t max, std::function<std::string(const std::string&)> too_many) {
  positionals_ = &into;
  min_positionals_ = min;
  too_few_ = std::move(too_few);
  max_positionals_ = max;
  too_many_ = std::move(too_many);
  return *this;
}

const Option* CommandLine::find(std::string_view arg) const {
  for (const Option& o : options_)
    for (const std::string_view name : o.names)
      if (name == arg) return &o;
  return nullptr;
}

std::vector<std::string_view> CommandLine::offered_names() const {
  std::vector<std::string_view> out;
  for (const Option& o : options_) {
    if (!o.offered) continue;
    for (const std::string_view name : o.names)
      if (name.substr(0, 2) == "--") out.push_back(name);
  }
  out.push_back("--help");
  return out;
}

ParsedLine CommandLine::parse(int argc, const char* const* argv) const {
  ParsedLine out;
  bool options_done = false;
  std::size_t positionals = 0;
  for (int i = 1; i < argc && out.error.empty(); ++i) {
    const std::string arg = argv[i];
    if (options_done || !looks_like_option(arg)) {
      if (!positionals_) {
        out.error = unknown_option(arg, offered_names());
      } else if (++positionals > max_positionals_) {
        out.error = too_many_ ? too_many_(arg) : "unexpected argument '" + arg + "'";
      } else {
        positionals_->push_back(arg);
      }
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (is_help(arg)) {
      out.help = true;
      return out;
    }
    const Option* option = find(arg);
    if (!option) {
      out.error = unknown_option(arg, offered_names());
      continue;
    }
    std::string value;
    if (option->kind == Option::Kind::value) {
      if (i + 1 >= argc || (argv[i + 1][0] == '\0' && !option->empty_ok)) {
        out.error = arg + " needs a value";
        continue;
      }
      value = argv[++i];
    }
    out.error = option->take(arg, value);
  }
  if (out.error.empty() && positionals_ && positionals < min_positionals_)
    out.error = too_few_.empty() ? std::string("an argument is missing") : too_few_;
  return out;
}

std::optional<int> CommandLine::read(int argc, const char* const* argv) const {
  const ParsedLine parsed = parse(argc, argv);
  if (parsed.help) {
    std::fwrite(usage_.data(), 1, usage_.size(), stdout);
    return 0;
  }
  if (!parsed.error.empty()) return usage_error(parsed.error);
  return std::nullopt;
}

int CommandLine::usage_error(std::string_view why) const { return tools::usage_error(command_, why); }

}  // namespace chakrashim::tools
