#include "check/et_file_rules.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>
#include <map>
#include <unordered_map>

namespace chakrashim::tools::check {

namespace {

// Chakra's NodeType and CollectiveCommType values.
constexpr int kInvalid = 0, kMetadata = 1, kCommSend = 5, kCommRecv = 6, kCommColl = 7;

std::string label(const EtFileNode& n) { return "node " + std::to_string(n.id) + " (" + n.name + ")"; }

bool simulated_collective(std::int64_t type) {
  return type == 0 || type == 2 || type == 5 || type == 6 || type == 7;
}

std::string collective_name(std::int64_t type) {
  static const char* const kNames[] = {"ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER",
                                       "SCATTER",    "BROADCAST",      "ALL_TO_ALL",           "REDUCE_SCATTER",
                                       "REDUCE_SCATTER_BLOCK",         "BARRIER"};
  return type >= 0 && type < 10 ? kNames[type] : "type " + std::to_string(type);
}

bool integer_text(const std::string& s) {
  return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

class FileRules {
 public:
  explicit FileRules(const EtFile& f) : f_(f) {}

  std::vector<EtFinding> run(EtFileFigures* figures);

 private:
  void add(const char* rule, std::string detail, std::string fix, EtSeverity s = EtSeverity::error) {
    out_.push_back({f_.rank, s, rule, f_.path + ": " + std::move(detail), std::move(fix)});
  }
  void deps();
  void cycle();
  void node(const EtFileNode& n, EtFileFigures& figures);
  // et.compute_exceeds_window: what ASTRA-sim cannot fit in the window.
  void window();
  void collapse_by_rule(std::size_t from);

  const EtFile& f_;
  std::unordered_map<std::uint64_t, std::size_t> index_;
  std::vector<EtFinding> out_;
};

constexpr const char* kConvertFix = "convert the capture with this chakrashim, without --chakra-exact";
// How far above its window a rank's floor may be before check warns: the
// band `chakrashim simulate` warns beyond.
constexpr double kWindowTolerance = 0.15;

// "12.34 ms"
std::string ms_text(std::uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", static_cast<double>(ns) / 1e6);
  return text;
}

void FileRules::deps() {
  std::size_t missing = 0;
  const EtFileNode* first = nullptr;
  std::uint64_t first_dep = 0;
  const char* kind = "";
  for (const auto& n : f_.nodes) {
    for (const auto* list : {&n.data_deps, &n.ctrl_deps}) {
      for (const auto d : *list) {
        if (index_.count(d)) continue;
        if (missing++ == 0) {
          first = &n;
          first_dep = d;
          kind = list == &n.data_deps ? "data" : "ctrl";
        }
      }
    }
  }
  if (missing == 0) return;
  add("et.dep_missing",
      label(*first) + " has a " + kind + " dep on node " + std::to_string(first_dep) + ", which is not in the file" +
          (missing > 1 ? " (" + std::to_string(missing) + " such deps)" : std::string()) +
          "; ASTRA-sim's feeder stops: 'Node " + std::to_string(first_dep) + " in " + kind +
          "_dep graph, but not found in index'",
      kConvertFix);
}

void FileRules::cycle() {
  // Depth-first over data and ctrl deps: 0 new, 1 on the path, 2 done.
  std::vector<std::uint8_t> state(f_.nodes.size(), 0);
  std::vector<std::pair<std::size_t, std::size_t>> path;  // node, next dep
  bool any_free = false;
  for (std::size_t start = 0; start < f_.nodes.size(); ++start) {
    // A dep on a node not in the file is et.dep_missing's: not counted here.
    const auto& s = f_.nodes[start];
    const auto present = [this](std::uint64_t d) { return index_.count(d) > 0; };
    if (std::none_of(s.data_deps.begin(), s.data_deps.end(), present) &&
        std::none_of(s.ctrl_deps.begin(), s.ctrl_deps.end(), present))
      any_free = true;
    if (state[start] != 0) continue;
    path.push_back({start, 0});
    state[start] = 1;
    while (!path.empty()) {
      auto& [cur, next] = path.back();
      const EtFileNode& n = f_.nodes[cur];
      const std::size_t count = n.data_deps.size() + n.ctrl_deps.size();
      if (next == count) {
        state[cur] = 2;
        path.pop_back();
        continue;
      }
      const std::uint64_t d =
          next < n.data_deps.size() ? n.data_deps[next] : n.ctrl_deps[next - n.data_deps.size()];
      ++next;
      const auto it = index_.find(d);
      if (it == index_.end() || state[it->second] == 2) continue;
      if (state[it->second] == 1) {
        std::string text;
        for (auto p = std::find_if(path.begin(), path.end(), [&](const auto& e) { return e.first == it->second; });
             p != path.end(); ++p)
          text += label(f_.nodes[p->first]) + " -> ";
        add("et.cycle", "dependency cycle: " + text + label(f_.nodes[it->second]) +
                            " (a node waits on itself: the simulation never ends)",
            kConvertFix);
        return;
      }
      state[it->second] = 1;
      path.push_back({it->second, 0});
    }
  }
  if (!f_.nodes.empty() && !any_free)
    add("et.cycle", "no node is free of deps: ASTRA-sim's feeder finds nothing to start with", kConvertFix);
}

void FileRules::node(const EtFileNode& n, EtFileFigures& fig) {
  const bool comm = n.type == kCommSend || n.type == kCommRecv || n.type == kCommColl;
  if (n.type == kInvalid) {
    add("et.node_type", label(n) + " is an INVALID_NODE: ASTRA-sim skips it", "", EtSeverity::warning);
  } else if (n.type == kMetadata) {
    add("et.node_type", label(n) + " is a METADATA_NODE: ASTRA-sim asserts on it ('Invalid node_type', "
                        "Statistics::get_operator_type)", kConvertFix);
  } else if (n.type < kMetadata || n.type > kCommColl) {
    add("et.node_type", label(n) + " has node type " + std::to_string(n.type) + ", which ASTRA-sim does not know",
        kConvertFix);
  }
  if (!n.is_cpu_op && n.type != kMetadata && n.type != kInvalid) {
    add("et.node_attrs", label(n) + " has no is_cpu_op attribute, which ASTRA-sim reads with no default",
        kConvertFix);
  } else if (comm && n.is_cpu_op && *n.is_cpu_op) {
    add("et.node_attrs", label(n) + " is a comm node with is_cpu_op true: ASTRA-sim stops ('Comm node should not be on CPU')",
        kConvertFix);
  }
  if (n.type == kCommColl) {
    ++fig.collectives;
    if (!n.comm_type) add("et.comm_attrs", label(n) + " is a collective without comm_type", kConvertFix);
    else if (!simulated_collective(*n.comm_type))
      add("et.comm_attrs", label(n) + " is a " + collective_name(*n.comm_type) + ", which ASTRA-sim does not simulate",
          kConvertFix);
  }
  if (n.type == kCommSend) ++fig.sends;
  if (n.type == kCommRecv) ++fig.receives;
  if (comm && (!n.comm_size || *n.comm_size < 0)) add("et.comm_attrs", label(n) + " has no comm_size", kConvertFix);
  if (n.type == kCommSend && !n.comm_dst)
    add("et.comm_attrs", label(n) + " is a send without comm_dst (ASTRA-sim reads it with no default)", "");
  if (n.type == kCommRecv && !n.comm_src)
    add("et.comm_attrs", label(n) + " is a receive without comm_src (ASTRA-sim reads it with no default)", "");
  // ASTRA-sim reads the issuing end with the rank as its default, and
  // throws where it is another rank's.
  if (f_.rank && n.type == kCommSend && n.comm_src && *n.comm_src != static_cast<std::int64_t>(*f_.rank))
    add("et.comm_attrs", label(n) + " is a send from rank " + std::to_string(*n.comm_src) + " in rank " +
                             std::to_string(*f_.rank) + "'s file: ASTRA-sim stops ('Send node should be issued by the sender')",
        kConvertFix);
  if (f_.rank && n.type == kCommRecv && n.comm_dst && *n.comm_dst != static_cast<std::int64_t>(*f_.rank))
    add("et.comm_attrs", label(n) + " is a receive for rank " + std::to_string(*n.comm_dst) + " in rank " +
                             std::to_string(*f_.rank) + "'s file: ASTRA-sim stops ('Recv node should be issued by the receiver')",
        kConvertFix);
  if (comm && n.pg_name && !n.pg_name->empty() && !integer_text(*n.pg_name))
    add("et.comm_attrs", label(n) + " names process group '" + *n.pg_name +
                             "': ASTRA-sim reads pg_name as an integer (std::stoi) and stops",
        "");
  if (n.type == 4) ++fig.comp;
}

void FileRules::window() {
  // ASTRA-sim runs one CPU op at a time on a rank, and one GPU compute
  // node at a time (HardwareResource::is_available, astra-sim 518bd51;
  // is_cpu_op reads false where it is absent): each total is a floor under
  // the rank's simulated time, whatever the dependencies. Ops that ran at
  // once on several host threads (backward's, the data loader's) are
  // serialized, and a rank whose floor is above its window cannot be
  // simulated as it ran.
  if (!f_.window_ns || *f_.window_ns == 0) return;
  const std::uint64_t cost = f_.cost_taken_ns.value_or(0);
  const std::uint64_t expected = *f_.window_ns > cost ? *f_.window_ns - cost : 0;
  if (expected == 0) return;
  std::uint64_t cpu_us = 0, gpu_us = 0;
  for (const auto& n : f_.nodes) {
    if (n.type != 4) continue;
    (n.is_cpu_op.value_or(false) ? cpu_us : gpu_us) += n.duration_micros;
  }
  const std::uint64_t floor_ns = std::max(cpu_us, gpu_us) * 1000;
  if (static_cast<double>(floor_ns) <= static_cast<double>(expected) * (1 + kWindowTolerance)) return;
  const bool cpu = cpu_us >= gpu_us;
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", static_cast<double>(floor_ns) / static_cast<double>(expected));
  std::string window = "its captured window (" + ms_text(*f_.window_ns);
  if (cost > 0) window += " less " + ms_text(cost) + " of recording cost";
  window += ")";
  add("et.compute_exceeds_window",
      std::string(cpu ? "its CPU" : "its GPU compute") + " nodes add up to " + ms_text(floor_ns) + ", " + ratio +
          " times " + window + ": ASTRA-sim runs one " + (cpu ? "CPU" : "GPU compute") +
          " node at a time on a rank, so its simulated time will be at least that" +
          (cpu ? " (ops that ran at once on several host threads are run one after another)" : ""),
      "see docs/simulate.md, \"When the simulation does not match\"", EtSeverity::warning);
}

void FileRules::collapse_by_rule(std::size_t from) {
  // One finding per rule and file is enough to act on (a trace has
  // thousands of nodes); the count says how many more there are.
  std::vector<EtFinding> kept;
  std::map<std::string, std::size_t> count;
  for (std::size_t i = from; i < out_.size(); ++i) {
    if (count[out_[i].rule]++ == 0) kept.push_back(std::move(out_[i]));
  }
  for (auto& k : kept) {
    if (count[k.rule] > 1) k.detail += " (and " + std::to_string(count[k.rule] - 1) + " more)";
  }
  out_.resize(from);
  std::move(kept.begin(), kept.end(), std::back_inserter(out_));
}

std::vector<EtFinding> FileRules::run(EtFileFigures* figures) {
  EtFileFigures fig;
  if (!f_.read_error.empty()) {
    add("et.read", f_.read_error, "give a Chakra protobuf .et (chakrashim convert writes them)");
    return std::move(out_);
  }
  fig.nodes = f_.nodes.size();
  for (std::size_t i = 0; i < f_.nodes.size(); ++i) {
    if (!index_.emplace(f_.nodes[i].id, i).second) {
      add("et.ids", "node id " + std::to_string(f_.nodes[i].id) + " appears twice", kConvertFix);
      return std::move(out_);
    }
  }
  deps();
  cycle();
  const std::size_t per_node = out_.size();
  for (const auto& n : f_.nodes) node(n, fig);
  collapse_by_rule(per_node);
  window();
  if (figures) *figures = fig;
  return std::move(out_);
}

struct Collective {
  std::int64_t type = 0, size = 0;
  std::uint64_t node = 0;
};

std::string group_key(const EtFileNode& n) { return n.pg_name && *n.pg_name != "0" ? *n.pg_name : ""; }

}  // namespace

std::vector<EtFinding> check_et_file(const EtFile& file, EtFileFigures* figures) {
  return FileRules(file).run(figures);
}

namespace {

// Each process group's collectives, per rank, in id order; every rank is in
// the default group ("").
using GroupCollectives = std::map<std::string, std::map<std::uint64_t, std::vector<Collective>>>;

void missing_ranks(const std::vector<std::uint64_t>& ranks, std::uint64_t world, std::vector<EtFinding>& out) {
  for (std::uint64_t r = 0; r < world && !ranks.empty(); ++r) {
    if (std::find(ranks.begin(), ranks.end(), r) != ranks.end()) continue;
    out.push_back({r, EtSeverity::warning, "et.rank_missing",
                   "rank " + std::to_string(r) + " of world size " + std::to_string(world) + " has no .et file",
                   "convert every rank; ASTRA-sim reads PREFIX.R.et for each NPU"});
  }
}

// Each point-to-point message (src, dst, tag, size): sends and receives.
using P2pMessages = std::map<std::array<std::int64_t, 4>, std::array<std::uint64_t, 2>>;

void count_p2p(const EtFile& f, P2pMessages& messages) {
  const auto self = static_cast<std::int64_t>(*f.rank);
  for (const auto& n : f.nodes) {
    if (n.type != kCommSend && n.type != kCommRecv) continue;
    const bool send = n.type == kCommSend;
    const std::int64_t src = send ? n.comm_src.value_or(self) : n.comm_src.value_or(-1);
    const std::int64_t dst = send ? n.comm_dst.value_or(-1) : n.comm_dst.value_or(self);
    ++messages[{src, dst, n.comm_tag.value_or(0), n.comm_size.value_or(-1)}][send ? 0 : 1];
  }
}

void match_p2p(const P2pMessages& messages, const std::vector<std::uint64_t>& ranks, std::vector<EtFinding>& out) {
  const auto has = [&](std::int64_t r) {
    return r >= 0 && std::find(ranks.begin(), ranks.end(), static_cast<std::uint64_t>(r)) != ranks.end();
  };
  std::size_t said = 0;
  for (const auto& [key, count] : messages) {
    const auto& [src, dst, tag, size] = key;
    if (count[0] == count[1] || !has(src) || !has(dst)) continue;
    if (++said > 8) break;  // the first few say what is wrong
    out.push_back({static_cast<std::uint64_t>(count[0] > count[1] ? src : dst), EtSeverity::error, "et.p2p_match",
                   "rank " + std::to_string(src) + " sends " + std::to_string(count[0]) + " and rank " +
                       std::to_string(dst) + " receives " + std::to_string(count[1]) + " message(s) of " +
                       std::to_string(size) + " bytes, tag " + std::to_string(tag) +
                       ": the simulation would hang on the unmatched ones",
                   "capture and convert every rank over the same steps"});
  }
}

// Every rank of a group against the group's first rank: the types in
// order (else the simulation hangs), then the sizes.
void compare_groups(const GroupCollectives& groups, std::vector<EtFinding>& out) {
  static const char* const kFix = "capture and convert every rank over the same steps";
  for (const auto& [group, by_rank] : groups) {
    const std::string who = group.empty() ? "the default process group" : "process group " + group;
    const auto& [first_rank, first] = *by_rank.begin();
    for (const auto& [rank, list] : by_rank) {
      const std::size_t n = std::min(list.size(), first.size());
      std::size_t i = 0;
      while (i < n && list[i].type == first[i].type) ++i;
      if (i < n || list.size() != first.size()) {
        std::string detail = "in " + who + ", rank " + std::to_string(rank) + " has " + std::to_string(list.size()) +
                             " collectives, rank " + std::to_string(first_rank) + " " + std::to_string(first.size());
        if (i < n)
          detail += "; the " + std::to_string(i + 1) + "th differs: " + collective_name(list[i].type) + " (node " +
                    std::to_string(list[i].node) + ") against " + collective_name(first[i].type) + " (node " +
                    std::to_string(first[i].node) + ")";
        out.push_back({rank, EtSeverity::error, "et.collectives_match", detail + ": the simulation would hang", kFix});
        continue;
      }
      i = 0;
      while (i < n && list[i].size == first[i].size) ++i;
      if (i == n) continue;
      out.push_back({rank, EtSeverity::warning, "et.collectives_match",
                     "in " + who + ", collective " + std::to_string(i + 1) + " moves " + std::to_string(list[i].size) +
                         " bytes on rank " + std::to_string(rank) + " (node " + std::to_string(list[i].node) + "), " +
                         std::to_string(first[i].size) + " on rank " + std::to_string(first_rank),
                     kFix});
    }
  }
}

}  // namespace

std::vector<EtFinding> check_et_set(const std::vector<EtFile>& files) {
  std::vector<EtFinding> out;
  GroupCollectives groups;
  P2pMessages messages;
  std::uint64_t world = 0, any = 0;
  std::vector<std::uint64_t> ranks;
  for (const EtFile& f : files) {
    if (!f.rank || !f.read_error.empty()) continue;
    ranks.push_back(*f.rank);
    count_p2p(f, messages);
    world = std::max(world, *f.rank + 1);
    groups[""][*f.rank];
    for (const auto& n : f.nodes) {
      if (n.world) world = std::max(world, *n.world);
      if (n.type == kCommSend || n.type == kCommRecv) ++any;  // a pipeline's communication
      if (n.type != kCommColl) continue;
      ++any;
      groups[group_key(n)][*f.rank].push_back({n.comm_type.value_or(-1), n.comm_size.value_or(-1), n.id});
    }
  }
  missing_ranks(ranks, world, out);
  if (world > 1 && any == 0) {
    out.push_back({std::nullopt, EtSeverity::warning, "et.no_collectives",
                   "a world of " + std::to_string(world) + " ranks with no collective in any file: the simulation has no communication",
                   "convert the capture with this chakrashim (host c10d collectives become comm nodes)"});
  }
  compare_groups(groups, out);
  match_p2p(messages, ranks, out);
  return out;
}

}  // namespace chakrashim::tools::check
