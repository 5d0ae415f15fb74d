#include "bridge/trace_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <memory>
#include <set>
#include <system_error>
#include <tuple>
#include <unordered_map>

#include "bridge/bridge_log.h"
#include "chakrashim/collector.h"
#include "chakrashim/trace_schema.h"
#include "files/gzip_sink.h"
#include "files/output_dirs.h"
#include "files/publish.h"
#include "writers/json_validate.h"
#include "writers/step_ranges.h"
#include "writers/torch_et_steps.h"

#include <nlohmann/json.hpp>

namespace chakrashim::bridge {

namespace {


// A partial last step in which no op was kept (the job ended, or a signal
// came, right after a completed step: up to the interpreter's teardown) is
// not a step of the job: it is left out, and partial_last_step is null.
void drop_empty_partial_step(WindowOutput& o) {
  auto& meta = o.trailer.steps;
  if (!meta.partial_last_step) return;
  const auto step = std::find_if(o.steps.begin(), o.steps.end(),
                                 [&](const StepSpan& s) { return s.step == *meta.partial_last_step; });
  if (step == o.steps.end()) return;
  for (const auto& thread : o.spans)
    for (const auto& chunk : thread.chunks)
      for (const auto& s : chunk)
        if (s.start_ns >= step->start_ns && s.start_ns <= step->end_ns) return;
  o.steps.erase(step);
  meta.partial_last_step.reset();
}

// Steps that hold more than one iteration: a GradScaler runs its update op
// once per iteration, on the stepping thread, and skips the optimizer step
// (so the step does not end) where the gradients held inf or nan. Two such
// ops in one step: two iterations, their work counted as one step (issue
// #49: ProfilerStep#4 held two forward passes, two zero_grad and one
// Optimizer.step, and nothing said so).
void find_merged_steps(WindowOutput& o) {
  if (o.steps.empty()) return;
  const std::int64_t tid = o.steps.front().tid;
  std::vector<std::int64_t> updates;
  for (const auto& thread : o.spans)
    for (const auto& chunk : thread.chunks)
      for (const auto& s : chunk)
        if (s.tid == tid && s.name && *s.name == schema::kAmpUpdateScaleOp) updates.push_back(s.start_ns);
  if (updates.size() < 2) return;
  std::sort(updates.begin(), updates.end());
  for (const auto& step : o.steps) {
    const auto first = std::lower_bound(updates.begin(), updates.end(), step.start_ns);
    const auto last = std::upper_bound(first, updates.end(), step.end_ns);
    const auto n = static_cast<std::uint64_t>(last - first);
    if (n >= 2) o.trailer.steps.merged.push_back({step.step, n, std::string(schema::kMergedGradScaler)});
  }
}

// The collector's records, cut to the captured steps and joined to the ops
// (collector.h), and what the metadata says of them.
void finish_device_capture(WindowOutput& o) {
  auto& dev = o.device_capture;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  for (const auto& s : o.steps) ranges.emplace_back(s.start_ns, s.end_ns);
  collector::join_device_capture(dev, ranges);
  if (!dev.device_properties_json.empty()) o.header.device_properties_json = dev.device_properties_json;
  o.trailer.dropped_records = dev.dropped_records;
  o.trailer.invalid_records = dev.invalid_records;
  o.trailer.unattributed_gpu_ops = dev.unattributed_gpu_ops;
  o.trailer.clock = dev.clock;
  if (dev.truncated_at_ns && (!o.trailer.truncated_at_ns || *dev.truncated_at_ns < *o.trailer.truncated_at_ns))
    o.trailer.truncated_at_ns = dev.truncated_at_ns;
}

// recording_cost.h on the window's spans, one thread at a time, from the
// first 2^18 spans a thread recorded (by their end): a median needs no
// more, and the copy stays under 7 MB beside the records.
//
// And from the step times: the window's steps against the unrecorded ones
// before it, over the spans a step on the stepping thread.
std::optional<writers::RecordingCost> recording_cost(const WindowOutput& o) {
  constexpr std::size_t kSpansPerThread = 1 << 18;
  writers::RecordingCostMeter meter;
  std::vector<std::int64_t> recorded;
  for (const auto& s : o.steps) recorded.push_back(s.duration_ns > 0 ? s.duration_ns : s.end_ns - s.start_ns);
  // The stepping thread's spans inside the captured steps, counted on the
  // same walk (no steps: none).
  const std::int64_t tid = o.steps.empty() ? 0 : o.steps.front().tid;
  const std::int64_t from = o.steps.empty() ? 0 : o.steps.front().start_ns;
  const std::int64_t to = o.steps.empty() ? -1 : o.steps.back().end_ns;
  std::uint64_t stepping_ops = 0;
  for (const auto& thread : o.spans) {
    std::vector<writers::OpInterval> spans;
    for (const auto& chunk : thread.chunks)
      for (const auto& s : chunk) {
        if (s.tid == tid && s.start_ns >= from && s.end_ns <= to) ++stepping_ops;
        if (spans.size() < kSpansPerThread)
          spans.push_back({s.start_ns, s.end_ns,
                           s.category == HostCategory::cpu_op && s.name != nullptr &&
                               s.name->rfind("aten::", 0) == 0});
      }
    meter.add_thread(std::move(spans));
  }
  const double ops_per_step = o.steps.empty() ? 0.0 : static_cast<double>(stepping_ops) / o.steps.size();
  const auto step = writers::step_figure(o.unrecorded_step_ns, std::move(recorded), ops_per_step);
  return writers::recording_cost_of(meter.result(), step, o.unrecorded_step_ns.size());
}

void write_device_trace(WindowOutput& o, std::string& summary, std::vector<std::string>& failures) {
  // Not sorted: readers order events themselves, and sorting would hold a
  // second copy or an index as large as the spans.
  std::int64_t first = 0;
  for (const auto& thread : o.spans)
    for (const auto& chunk : thread.chunks)
      for (const auto& s : chunk) first = first == 0 ? s.start_ns : std::min(first, s.start_ns);
  for (const auto& s : o.steps) first = first == 0 ? s.start_ns : std::min(first, s.start_ns);
  const std::int64_t base = writers::base_time_ns(first);
  o.trailer.recording_cost = recording_cost(o);
  const auto produce = [&](files::ByteSink& file) {
    std::optional<files::GzipSink> gz;
    if (o.gzip) gz.emplace(file);
    files::ByteSink& sink = gz ? static_cast<files::ByteSink&>(*gz) : file;
    writers::KinetoTraceWriter w(sink, base);
    w.begin(o.header);
    w.process_name(o.pid, o.exe_name);
    std::set<std::int64_t> tids;
    for (const auto& thread : o.spans)
      for (const auto& chunk : thread.chunks)
        for (const auto& s : chunk) tids.insert(s.tid);
    for (const auto& s : o.steps) tids.insert(s.tid);
    const auto& dev = o.device_capture;
    for (const auto& e : dev.events)
      if (e.kind == DeviceEventKind::runtime || e.kind == DeviceEventKind::driver) tids.insert(e.tid);
    for (auto tid : tids) w.thread_name(o.pid, tid, "thread " + std::to_string(tid));
    // GPU rows as Kineto draws them: pid = device, tid = stream.
    std::set<std::pair<std::int64_t, std::int64_t>> streams;
    for (const auto& e : dev.events)
      if (e.kind == DeviceEventKind::kernel || e.kind == DeviceEventKind::memcpy ||
          e.kind == DeviceEventKind::memset)
        streams.emplace(e.device, e.stream);
    std::set<std::int64_t> devices;
    for (const auto& [d, st] : streams) {
      if (devices.insert(d).second) w.process_name(d, "GPU " + std::to_string(d));
      w.thread_name(d, st, "stream " + std::to_string(st));
    }
    for (const auto& step : o.steps) w.step_span(step);
    for (const auto& thread : o.spans) {
      for (const auto& chunk : thread.chunks) {
        for (const auto& compact : chunk) {
          HostSpan span = thread.expand(compact);
          span.pid = o.pid;
          w.host_span(span, span.rf_id != 0 ? o.inputs.find(span.rf_id) : nullptr);
        }
      }
    }
    // The comm args of a record_param_comms op go onto the kernels it
    // launched too (NCCL's): trace_link reads the process group from the
    // GPU op ("Process Group Name"), as Kineto writes it there.
    std::unordered_map<std::uint64_t, const ExtraArgs*> comm_args;
    for (const auto& thread : o.spans)
      for (const auto& chunk : thread.chunks)
        for (const auto& s : chunk)
          if (s.extra != 0 && s.extra <= thread.extras.size()) comm_args.emplace(s.external_id, &thread.extras[s.extra - 1]);
    for (const auto& e : dev.events) {
      const ExtraArgs* extra = nullptr;
      if (e.kind == DeviceEventKind::kernel && !comm_args.empty()) {
        if (auto it = comm_args.find(e.external_id); it != comm_args.end()) extra = it->second;
      }
      w.device_event(e, e.name < dev.names.size() ? dev.names[e.name] : "", o.pid, extra);
      if (e.flow) w.flow(e, o.pid);
    }
    const bool written = w.end(o.trailer);
    return gz ? gz->finish() && written : written;
  };
  const auto r = files::publish_file_at(device_folder(o.layout), base_name(o.layout.device_path), produce,
                                        writers::validate_json_file, o.overwrite);
  if (r.ok) {
    summary += " device trace " + o.layout.device_path;
  } else {
    failures.push_back("the device trace was not written (" + r.error + ")");
  }
}

// What the ET says of its window (the ET's top-level "chakrashim" object,
// issue #49): which chakrashim wrote it, and whether the window has a
// device trace, so that check tells a lost one (the process died after the
// ET was written, or it was deleted) from a capture without one.
nlohmann::json et_metadata(const WindowOutput& o) {
  nlohmann::json meta;
  meta["version"] = o.trailer.version;
  meta["device_trace"] = o.device ? "on" : "off";
  meta["run"] = o.trailer.run_id.empty() ? nlohmann::json() : nlohmann::json(o.trailer.run_id);
  meta["world_size"] = o.trailer.world_size ? nlohmann::json(*o.trailer.world_size) : nlohmann::json();
  for (const auto& m : o.trailer.steps.merged)
    meta["merged"].push_back({{"step", m.step}, {"iterations", m.iterations}, {"why", m.why}});
  return meta;
}

// The native recorder's records as torch's ET JSON (et_json_writer.h),
// published like the device trace: complete and valid, or absent.
std::uint64_t write_native_et(WindowOutput& o, std::string& summary, std::vector<std::string>& failures) {
  // The claimed, empty .partial makes way for the real one.
  const files::Folder dir = host_folder(o.layout);
  const std::string name = base_name(o.layout.host_path);
  ::unlinkat(dir.fd, files::partial_path(name).c_str(), 0);
  const auto streams = o.et_records.streams();
  // The process-group node, if its record missed the window (the watch
  // thread's answer came after a short window): from what is known now.
  o.et_records.header.process_groups = o.header.distributed.pg_config_json.value_or("");
  o.et_records.header.process_groups_tid = o.stepping_rf_tid;
  o.et_records.header.meta_json = et_metadata(o).dump();
  writers::EtWriteStats stats;
  const auto produce = [&](files::ByteSink& file) {
    o.inputs = {};  // a second try starts over
    return writers::write_et_json(file, o.et_records.header, streams, &stats, o.device ? &o.inputs : nullptr);
  };
  const auto r = files::publish_file_at(dir, name, produce, writers::validate_et_file, o.overwrite);
  // The records' pages go back now, not when the output is destroyed.
  o.et_records = {};
  o.inputs.seal();
  if (r.ok) {
    summary += " ET " + o.layout.host_path;
  } else {
    failures.push_back("the Execution Trace was not kept (" + r.error + ")");
  }
  if (r.ok && stats.process_groups_added)
    log_debug("the ET's process-group node was written from torch.distributed's answer: its record came "
              "after the window");
  if (stats.corrupt != 0)
    log_warn("the ET recorder's records had " + std::to_string(stats.corrupt) +
             " unreadable parts; those threads' later ops are missing from the ET");
  return r.ok ? stats.nodes : 0;
}

// Feeds the file NAME in `dir` (our own .partial: never through a symlink)
// through `renamer`; false if it could not be read.
bool filter_file(const files::Folder& dir, const std::string& name, writers::TorchEtStepRenamer& renamer) {
  struct Fd {
    int fd;
    ~Fd() {
      if (fd >= 0) ::close(fd);
    }
  } file{::openat(dir.fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) return false;
  std::string buffer(1 << 20, '\0');
  for (;;) {
    const ssize_t got = ::read(file.fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return false;
    if (got == 0) break;
    renamer.feed(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
  }
  renamer.finish();
  return true;
}

// torch's observer wrote the ET: its .partial is finalized as it is, unless
// it holds the job's own step records (its torch.profiler's ProfilerStep#N,
// torch_et_steps.h). Those are renamed as the native recorder and the device
// trace name them, by one copy of the file; a scan first, since most jobs
// run no profiler of their own. torch's file moves aside so that the copy is
// written and published under the usual .partial name.
files::PublishResult finalize_torch_et(const files::Layout& layout, bool overwrite) {
  const files::Folder dir = host_folder(layout);
  const std::string name = base_name(layout.host_path);
  const std::string partial = files::partial_path(name);
  writers::TorchEtStepRenamer scan(nullptr);
  if (!filter_file(dir, partial, scan) || scan.renamed() == 0)
    return files::finalize_partial_at(dir, partial, name, writers::validate_et_file, overwrite);
  const std::string torchs = name + ".torch.partial";
  if (::renameat(dir.fd, partial.c_str(), dir.fd, torchs.c_str()) != 0) {
    log_warn("the job's own ProfilerStep#N records keep torch's name in the ET (cannot move " +
             files::partial_path(layout.host_path) + " aside: " + std::string(std::strerror(errno)) + ")");
    return files::finalize_partial_at(dir, partial, name, writers::validate_et_file, overwrite);
  }
  const auto produce = [&](files::ByteSink& sink) {
    writers::TorchEtStepRenamer renamer(&sink);
    return filter_file(dir, torchs, renamer);
  };
  auto r = files::publish_file_at(dir, name, produce, writers::validate_et_file, overwrite);
  ::unlinkat(dir.fd, torchs.c_str(), 0);
  return r;
}

// Whether this process may take a thread back from SCHED_IDLE (or nice 19)
// to `nice`, the job's: Linux lets a thread leave SCHED_IDLE, or lower its
// nice value, only with CAP_SYS_NICE or an RLIMIT_NICE that allows that
// nice (20 - nice), and most users have neither (RLIMIT_NICE is 0 by
// default).
bool can_restore_priority(int nice) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NICE, &limit) == 0 &&
      (limit.rlim_cur == RLIM_INFINITY || static_cast<long>(limit.rlim_cur) >= 20 - nice))
    return true;
  // CAP_SYS_NICE (23) in the effective set: capget's version-3 layout,
  // without libcap. Asked once.
  static const bool capable = [] {
    struct {
      std::uint32_t version;
      int pid;
    } header{0x20080522, 0};
    struct {
      std::uint32_t effective, permitted, inheritable;
    } data[2]{};
    return ::syscall(SYS_capget, &header, data) == 0 && (data[0].effective & (1u << 23)) != 0;
  }();
  return capable;
}

// The writer thread yields the CPU to every other thread of the machine
// (issue #34: on a 2-core node its JSON competed with training and slowed
// the two steps after each window by 6-11 ms): SCHED_IDLE, the lowest
// policy Linux has; where it is refused (a seccomp profile, say), nice 19
// for this thread alone. Only where the capture can take it back at exit
// or on a terminating signal (raise_priority) to what it was (the job's
// policy and nice, which a new thread inherits: issue #48 found it put back
// to nice 0 in a job started with `nice -n 10`): a writer left at SCHED_IDLE
// while other work keeps the node busy (the other ranks of the node still
// training, say) could miss CHAKRA_EXIT_TIMEOUT at exit and leave its files
// .partial (e2e's README run did, at 20 s, on a loaded 2-core machine).
// Said at debug level, as the OS reports it back (tests/e2e/test_window_end.py
// reads it). Returns whether it lowered, with what to put back in `was`.
bool lower_writer_priority(WriterPriority& was) {
  const auto tid = static_cast<pid_t>(::syscall(SYS_gettid));
  errno = 0;
  was.tid = tid;
  was.policy = ::sched_getscheduler(0);
  was.nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  if (was.policy < 0 || (was.nice == -1 && errno != 0)) {
    log_debug("the trace writer runs at the job's priority: its own could not be read");
    return false;
  }
  if (!can_restore_priority(was.nice)) {
    log_debug("the trace writer runs at the job's priority: this process could not take it back "
              "from a lower one at exit (no CAP_SYS_NICE, RLIMIT_NICE below the job's nice)");
    return false;
  }
  sched_param param{};
  param.sched_priority = 0;
  if (::sched_setscheduler(0, SCHED_IDLE, &param) == 0 && ::sched_getscheduler(0) == SCHED_IDLE) {
    log_debug("the trace writer runs at SCHED_IDLE");
    return true;
  }
  // On Linux a thread's nice value is its own (setpriority on its tid).
  errno = 0;
  if (::setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 19) == 0 &&
      ::getpriority(PRIO_PROCESS, static_cast<id_t>(tid)) == 19 && errno == 0) {
    log_debug("the trace writer runs at nice 19");
    return true;
  }
  log_debug("the trace writer runs at the job's priority: the OS refused SCHED_IDLE and nice 19");
  return false;
}

}  // namespace

void set_distributed_info(WindowOutput& out, const std::string& json) {
  const auto info = nlohmann::json::parse(json, nullptr, false);
  if (!info.is_object()) return;
  auto& d = out.header.distributed;
  if (info.contains("backend") && info["backend"].is_string()) d.backend = info["backend"];
  if (info.contains("world_size") && info["world_size"].is_number_unsigned())
    d.world_size = info["world_size"].get<std::uint64_t>();
  if (info.contains("pg_count") && info["pg_count"].is_number_unsigned())
    d.pg_count = info["pg_count"].get<std::uint64_t>();
  if (info.contains("pg_config")) d.pg_config_json = info["pg_config"].dump();
  out.trailer.world_size = d.world_size;
}

void write_window(WindowOutput& o) {
  if (o.await_distributed) {
    if (const auto json = o.await_distributed()) set_distributed_info(o, *json);
    o.await_distributed = nullptr;
  }
  // One line in the end, whatever happened: the summary, or what failed.
  std::string summary;
  std::vector<std::string> failures;
  drop_empty_partial_step(o);
  find_merged_steps(o);
  const auto& steps = o.trailer.steps;
  if (o.steps.empty()) {
    // Not one step, whole or partial, holds an op (the window opened as the
    // job ended, the memory cap was reached before the first step's end, a
    // warm-up covered the window): a pair without a ProfilerStep is no
    // capture (check rejects it; Chakra's linker crashes on it). Nothing is
    // published; the claimed .partial names go.
    discard_outputs(o.layout, o.host, o.device);
    log_warn("the window kept no step (it ended: " + (steps.reason.empty() ? std::string("exit") : steps.reason) +
             "), so nothing was written under " + o.layout.host_dir.substr(0, o.layout.host_dir.rfind('/')) +
             "; capture steps the job completes, with CHAKRA_MAX_MEMORY large enough for one step");
    return;
  }
  std::uint64_t et_nodes = 0;
  if (o.host && o.et_native) {
    et_nodes = write_native_et(o, summary, failures);
  } else if (o.host) {
    const auto r = finalize_torch_et(o.layout, o.overwrite);
    if (r.ok) {
      summary += " ET " + o.layout.host_path;
    } else {
      failures.push_back("the Execution Trace was not kept (" + r.error + ")");
    }
  }
  std::size_t ops = 0;
  for (const auto& thread : o.spans)
    for (const auto& chunk : thread.chunks) ops += chunk.size();
  if (o.device) {
    // The claimed, empty .partial makes way for the real one.
    ::unlinkat(device_folder(o.layout).fd, files::partial_path(base_name(o.layout.device_path)).c_str(), 0);
    finish_device_capture(o);
    write_device_trace(o, summary, failures);
  }
  // Without a device trace no span is kept: the ET's op nodes are the ops
  // (issue #49: "3 steps, 0 ops" for a 358-node ET).
  std::string line = writers::captured_text(steps) + ", " +
                     (o.device || et_nodes == 0 ? std::to_string(ops) + " ops" : std::to_string(et_nodes) + " ET nodes");
  if (o.device) {
    const auto& cupti = o.trailer.cupti;
    if (cupti == "ok") {
      line += ", " + std::to_string(o.device_capture.events.size()) + " GPU records";
      if (o.trailer.dropped_records)
        line += " (" + std::to_string(o.trailer.dropped_records) + " dropped)";
    } else if (cupti == "absent") {
      line += ", host ops only: no CUDA in this process";
    } else {
      line += ", host ops only: CUPTI " + cupti;
    }
  }
  for (const auto& m : steps.merged)
    line += ", step " + std::to_string(m.step) + " holds " + std::to_string(m.iterations) +
            " iterations (a GradScaler skipped optimizer steps)";
  if (steps.cut_short) line += ", window cut short: " + steps.reason;
  line += ")";
  if (failures.empty()) {
    log_info(line + ":" + summary);
    return;
  }
  std::string why;
  for (const auto& f : failures) why += (why.empty() ? "" : "; ") + f;
  log_error(line + ", but " + why + (summary.empty() ? "" : "; kept:" + summary) +
            ". No incomplete file was left under a final name");
}

namespace {

// write_window, with whatever it throws said in one line.
void write_and_log(WindowOutput& out) {
  try {
    write_window(out);
  } catch (const std::exception& e) {
    log_error(std::string("writing the traces failed: ") + e.what());
  } catch (...) {
    log_error("writing the traces failed");
  }
}

}  // namespace

TraceWriterThread::~TraceWriterThread() {
  if (thread_.joinable()) thread_.detach();
}

void TraceWriterThread::start(WindowOutput output) {
  // Shared with the thread: if no thread can be had, the output is still
  // here to be written on this thread.
  auto shared = std::make_shared<WindowOutput>(std::move(output));
  Pending pending;
  {
    std::vector<std::uint64_t> steps;
    for (const auto& st : shared->steps) steps.push_back(st.step);
    pending.steps = writers::step_ranges(std::move(steps));
    for (const auto& thread : shared->spans)
      for (const auto& chunk : thread.chunks) pending.ops += chunk.size();
    pending.memory_bytes = shared->memory_bytes;
    if (shared->host) pending.partials.push_back(files::partial_path(shared->layout.host_path));
    if (shared->device) pending.partials.push_back(files::partial_path(shared->layout.device_path));
  }
  std::uint64_t ticket = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++running_;
    ticket = next_ticket_++;
    pending_.emplace_back(ticket, std::move(pending));
  }
  // One window after the other, in order (their summary lines too): a
  // window may end while the last one's writer, at the lowest priority,
  // still runs. Counted as running until written: the signal relay's
  // watcher waits for them.
  const auto write_in_turn = [this, ticket, shared](bool lower_priority) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      done_cv_.wait(lock, [&] { return written_ >= ticket; });
    }
    if (lower_priority && !full_speed_.load()) {
      WriterPriority was;
      if (lower_writer_priority(was)) {
        std::lock_guard<std::mutex> lock(priority_mutex_);
        lowered_ = was;
      }
      // The job may have begun to end meanwhile: its raise may have come
      // before this thread was lowered.
      if (full_speed_.load()) raise_priority();
    }
    write_and_log(*shared);
    {
      std::lock_guard<std::mutex> lock(priority_mutex_);
      lowered_.tid = 0;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    --running_;
    ++written_;
    std::erase_if(pending_, [&](const auto& p) { return p.first == ticket; });
    done_cv_.notify_all();
  };
  // The lowest priority only while the job trains on after the window: at
  // exit or on a terminating signal nothing of the job's competes any more,
  // and a writer at SCHED_IDLE on a node busy with other work could take
  // until CHAKRA_EXIT_TIMEOUT and leave the files .partial (a thread cannot
  // raise its priority again without privilege).
  const std::string& reason = shared->trailer.steps.reason;
  const bool job_ends = reason == "exit" || reason == "signal:SIGTERM" || reason == "signal:SIGINT";
  try {
    thread_ = std::thread(write_in_turn, /*lower_priority=*/!job_ends);
  } catch (const std::exception& e) {
    // No thread (a pids-limited cgroup, RLIMIT_NPROC). Left uncaught, this
    // escaped disarm: in mid-run torch swallowed it in our callback (exit
    // then waited CHAKRA_EXIT_TIMEOUT and both files stayed .partial); at
    // exit it left an atexit handler (SIGABRT). Writing here instead costs this
    // thread the time the writer would have taken (bounded by
    // CHAKRA_MAX_MEMORY), once, and leaves the files whole.
    log_warn(std::string("cannot start the trace writer thread (") + e.what() +
             "): the traces are written on this thread, now");
    write_in_turn(/*lower_priority=*/false);
    return;
  }
  // Detached so that exit never blocks on join or terminates on a joinable
  // thread; completion is signalled through done_cv_.
  thread_.detach();
}

void TraceWriterThread::raise_priority() {
  full_speed_.store(true);
  // Held across the calls: the thread cannot end its window (and another
  // take the tid) meanwhile.
  std::lock_guard<std::mutex> lock(priority_mutex_);
  const WriterPriority was = lowered_;
  if (was.tid == 0) return;
  // Back to the policy and nice it had, the job's (can_restore_priority said
  // the OS allows it).
  sched_param param{};
  param.sched_priority = 0;
  ::sched_setscheduler(was.tid, was.policy == SCHED_IDLE ? SCHED_OTHER : was.policy, &param);
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(was.tid), was.nice);
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(was.tid));
  const int policy = ::sched_getscheduler(was.tid);
  log_debug("the trace writer is back at " + std::string(policy == SCHED_OTHER ? "SCHED_OTHER" : "policy " + std::to_string(policy)) +
            ", nice " + std::to_string(nice) + " (the job's: nice " + std::to_string(was.nice) + ")");
  lowered_.tid = 0;
}

bool TraceWriterThread::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return done_cv_.wait_for(lock, timeout, [&] { return running_ == 0; });
}

std::vector<TraceWriterThread::Pending> TraceWriterThread::pending() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Pending> out;
  for (const auto& [ticket, p] : pending_) out.push_back(p);
  return out;
}

}  // namespace chakrashim::bridge
