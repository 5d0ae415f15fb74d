// Every subcommand's command line, read the same way: a table of options
// (flags, options with a value, options given again and again) and the
// positional arguments, read left to right; the first problem is the usage
// error (common/usage.h: one line on stderr, exit status 2).
//
//   bool json = false;
//   std::size_t jobs = default_threads();
//   std::vector<std::string> paths;
//   CommandLine line("check", kUsage);
//   line.flag({"--json"}, json)
//       .number({"--jobs"}, 1, 1024, "a number from 1 to 1024", jobs)
//       .positionals(paths, 1, "give a folder or trace files");
//   if (const auto status = line.read(argc, argv)) return *status;
//
// The rules, for every command:
//   -h, --help       prints the usage text on stdout; exit 0
//   --               the arguments after it are positional, even "-x"
//   "-" and ""       positional
//   -anything else   an option of the table, or "unknown option '--jsn'
//                    (did you mean --json?)": the nearest of the table's
//                    long names (config/nearest_name.h)
//   --name VALUE     the value is the next argument, whatever it holds
//                    ("--in -3" gives -3 to --in); none, or an empty one,
//                    is "--name needs a value"
//   a flag or value given twice: the flag stays set, the last value wins
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/value_grammar.h"

namespace chakrashim::tools {

// What an option does with its value (a flag's is empty): nothing to say
// (an empty string) or the usage error ("--jobs takes ..."). `name` is the
// option as typed ("-o" or "--output").
using TakeValue = std::function<std::string(std::string_view name, const std::string& value)>;

struct Option {
  enum class Kind { flag, value };
  std::vector<std::string_view> names;  // "--quiet", "-q"
  Kind kind = Kind::flag;
  TakeValue take;
  bool empty_ok = false;  // a value: "" is one, not a missing one
  bool offered = true;    // its long names are suggested for a mistyped option
};

// What a command line said: --help, a usage error, or neither (go on).
struct ParsedLine {
  bool help = false;
  std::string error;
};

class CommandLine {
 public:
  // `command`: "check", "link"... (empty for `chakrashim` itself); `usage`:
  // the --help text.
  CommandLine(std::string_view command, std::string_view usage);

  CommandLine& add(Option option);
  // Sets `into` when given.
  CommandLine& flag(std::vector<std::string_view> names, bool& into);
  // `into` gets the value (the last one, when given twice).
  CommandLine& value(std::vector<std::string_view> names, std::string& into, bool empty_ok = false);
  CommandLine& value(std::vector<std::string_view> names, TakeValue take);
  // Each value, in order: "--x a --x b" -> {"a", "b"}.
  CommandLine& repeated(std::vector<std::string_view> names, std::vector<std::string>& into);
  // A value taken and dropped: options other tools' scripts pass.
  CommandLine& ignored(std::vector<std::string_view> names);
  // Known only to say why it is not taken: `why` is the usage error. Never
  // suggested for a typo.
  CommandLine& refused(std::vector<std::string_view> names, std::string why);
  // Plain decimal digits from `min` to `max` (config::parse_decimal), or
  //   "--jobs takes a number from 1 to 1024, not 'x'"  (`what` names the range)
  template <class Number>
  CommandLine& number(std::vector<std::string_view> names, std::uint64_t min, std::uint64_t max, std::string what,
                      Number& into) {
    return value(std::move(names), [min, max, what = std::move(what), &into](std::string_view name,
                                                                            const std::string& text) {
      const auto n = config::parse_decimal(text);
      if (!n || *n < min || *n > max) return std::string(name) + " takes " + what + ", not '" + text + "'";
      into = static_cast<Number>(*n);
      return std::string();
    });
  }
  // --jobs N: the ranks worked on at once, 1 to 1024.
  CommandLine& jobs(std::size_t& into);

  // The positional arguments go to `into`. Fewer than `min` at the end is
  // the error `too_few`; one past `max` is the error too_many(that one)
  // as it comes. Without positionals, one is an unknown option.
  CommandLine& positionals(std::vector<std::string>& into, std::size_t min = 0, std::string too_few = {},
                           std::size_t max = std::numeric_limits<std::size_t>::max(),
                           std::function<std::string(const std::string& extra)> too_many = {});

  // Reads argv[1..argc) (argv[0] is the command's name). Stops at --help or
  // at the first error.
  ParsedLine parse(int argc, const char* const* argv) const;

  // parse(), then what every command does with it: nullopt to go on; 0
  // after printing the usage text for --help; 2 after printing the error.
  std::optional<int> read(int argc, const char* const* argv) const;

  // "chakrashim check: WHY (see 'chakrashim check --help')" on stderr; 2.
  int usage_error(std::string_view why) const;

  // The long names a typo is matched against, in table order, then --help.
  std::vector<std::string_view> offered_names() const;
  std::string_view usage() const { return usage_; }

 private:
  const Option* find(std::string_view arg) const;

  std::string command_;
  std::string usage_;
  std::vector<Option> options_;
  std::vector<std::string>* positionals_ = nullptr;
  std::size_t min_positionals_ = 0, max_positionals_ = 0;
  std::string too_few_;
  std::function<std::string(const std::string&)> too_many_;
};

}  // namespace chakrashim::tools
