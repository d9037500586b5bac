// Sessions: Start/Stop, the drain thread that turns recorded events into
// trace frames, and the process-lifetime hooks (atexit, fork).
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "core/clock_anchor.h"
#include "core/name_table.h"
#include "core/rank_info.h"
#include "core/record_path.h"
#include "core/recorder.h"
#include "core/resolved_config.h"
#include "core/warnings.h"
#include "smprof/smprof.h"
#include "trace/file_format.h"
#include "trace/frame_codec.h"
#include "trace/trace_writer.h"

#ifndef SMPROF_VERSION
#error "SMPROF_VERSION must be defined by the build"
#endif

namespace smprof {

namespace internal {

namespace {

// A frame is written when this many ranges are pending, or every flush interval.
constexpr std::size_t kMaxFrameEvents = 1 << 16;

// What the drain thread reports back to Stop.
struct DrainResult {
  std::uint64_t written = 0;
  std::uint64_t dropped = 0;
  std::uint64_t frames = 0;
};

struct SessionState {
  std::mutex control;  // serializes Start, Stop and fork
  bool active = false;
  std::uint32_t next_session_index = 0;
  ResolvedConfig config;
  std::int64_t start_ns = 0;
  std::unique_ptr<TraceWriter> writer;
  std::thread* drain = nullptr;  // a pointer: a forked child must never destroy it
  std::atomic<bool> stop_requested{false};
  DrainResult drained;  // written by the drain thread, read after join
  SessionStats last_stats;
};

SessionState& State() {
  static auto* state = new SessionState();  // leaked: usable from exit handlers
  return *state;
}

std::string ThreadName(std::uint32_t tid) {
  std::ifstream comm("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

std::vector<std::string> CommandLine() {
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  std::string arg;
  while (std::getline(cmdline, arg, '\0')) argv.push_back(arg);
  return argv;
}

void DrainLoop(SessionState* s) {
  Recorder& recorder = Recorder::Get();
  std::unordered_map<std::uint32_t, std::string> thread_names;
  FrameBuilder builder([](NameId id) { return NameTable::Get().Lookup(id); },
                       [&thread_names](std::uint32_t tid) {
                         auto [it, added] = thread_names.try_emplace(tid);
                         if (added) it->second = ThreadName(tid);
                         return it->second;
                       });
  DrainResult& result = s->drained;
  bool writable = true;
  trace::Frame frame;
  auto write_frame = [&] {
    if (builder.size() == 0) return;
    builder.Build(result.frames, &frame, kMaxFrameEvents);
    result.dropped += recorder.TakeDropped();
    frame.set_dropped_total(result.dropped);
    const auto count = static_cast<std::uint64_t>(frame.annotations().dur_ns_size());
    if (!writable) {
      result.dropped += count;
      return;
    }
    if (Status st = s->writer->Append(trace_format::kFrameTag, frame); !st.ok()) {
      Warn(st.message() + "; events from now on are lost, training continues");
      writable = false;
      result.dropped += count;
      return;
    }
    result.written += count;
    ++result.frames;
  };
  const std::int64_t start_ns = s->start_ns;
  // Only copies: DrainOnce holds the thread registry's lock around part of it.
  auto sink = [&](const AnnotationRecord* records, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      // Ranges closed by a thread that saw the previous session still recording.
      if (records[i].start_ns >= start_ns) builder.Add(records + i, 1);
    }
  };
  auto drain = [&] {
    recorder.DrainOnce(sink);
    while (builder.size() >= kMaxFrameEvents) write_frame();
  };
  std::int64_t last_frame_ns = NowNs();
  const std::int64_t interval_ns = static_cast<std::int64_t>(s->config.flush_interval_ms) * 1000000;
  while (!s->stop_requested.load(std::memory_order_acquire)) {
    recorder.WaitForWork(s->config.flush_interval_ms);
    drain();
    if (NowNs() - last_frame_ns >= interval_ns) {
      write_frame();
      last_frame_ns = NowNs();
    }
  }
  // Twice: a thread exiting during the first pass queues its last chunk.
  drain();
  drain();
  while (builder.size() > 0) write_frame();
  result.dropped += recorder.TakeDropped();
}

trace::FileHeader MakeHeader(const ResolvedConfig& config, const RankInfo& rank, const ClockPair& clock,
                             std::uint32_t session_index) {
  trace::FileHeader header;
  header.set_format_version(trace_format::kFormatVersion);
  header.set_library_version(SMPROF_VERSION);
  header.set_host(rank.host);
  header.set_rank(rank.rank);
  header.set_local_rank(rank.local_rank);
  header.set_world_size(rank.world_size);
  header.set_job(rank.job);
  header.set_rank_source(rank.source);
  header.set_pid(getpid());
  header.set_parent_pid(getppid());
  for (const std::string& arg : CommandLine()) header.add_argv(arg);
  for (const auto& [key, value] : config.effective) (*header.mutable_config())[key] = value;
  header.mutable_start()->set_monotonic_ns(clock.monotonic_ns);
  header.mutable_start()->set_realtime_ns(clock.realtime_ns);
  header.set_session_index(session_index);

  auto add_collector = [&](const char* name, bool active, const std::string& reason) {
    trace::CollectorStatus* collector = header.add_collectors();
    collector->set_name(name);
    collector->set_active(active);
    collector->set_reason(reason);
  };
  add_collector("annotations", true, "");
  // These collectors are configured here but collected by later versions;
  // the trace says so, and an explicit request gets one warning.
  struct Pending {
    const char* collector;
    const char* key;
    bool requested;
  };
  const Pending pending[] = {
      {"cuda", "EnableCuda", config.enable_cuda != Tristate::kOff},
      {"perf", "EnablePerf", config.enable_perf},
      {"fork_follow", "EnableForkFollow", config.enable_fork_follow},
  };
  for (const Pending& p : pending) {
    const std::string reason =
        p.requested ? std::string("not collected by smprof ") + SMPROF_VERSION : std::string("disabled by ") + p.key;
    add_collector(p.collector, false, reason);
    if (p.requested && config.explicit_keys.count(p.key) != 0 && config.explicit_keys.at(p.key) != "auto") {
      WarnOnce(p.key, std::string(p.key) + "=" + config.explicit_keys.at(p.key) + ": " + reason +
                          "; annotations are recorded as usual");
    }
  }
  return header;
}

// Forgets every handle range left open by an earlier session.
void ClearOpenRanges() {
  Recorder& recorder = Recorder::Get();
  std::lock_guard<std::mutex> lock(recorder.registry_mutex());
  recorder.ForEachThreadLocked([](ThreadState* thread) {
    std::lock_guard<std::mutex> open_lock(thread->open_mutex);
    thread->open.clear();
    thread->open_count.store(0, std::memory_order_relaxed);
  });
}

std::uint64_t CountOpenRanges() {
  Recorder& recorder = Recorder::Get();
  std::uint64_t open = 0;
  std::lock_guard<std::mutex> lock(recorder.registry_mutex());
  recorder.ForEachThreadLocked(
      [&open](ThreadState* thread) { open += thread->open_count.load(std::memory_order_relaxed); });
  return open;
}

bool DisabledByEnvironment() {
  const char* value = std::getenv("SMP_DISABLE");
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

void StopAtExit() {
  if (IsProfiling()) Stop();
}

void ForkPrepare() {
  State().control.lock();
  Recorder::Get().LockForFork();
  NameTable::Get().mutex().lock();
}

void ForkParent() {
  NameTable::Get().mutex().unlock();
  Recorder::Get().UnlockAfterFork();
  State().control.unlock();
}

// The child has only the forking thread: the drain thread is gone. It must
// not write to the parent's file; it records nothing until it starts a
// session of its own.
void ForkChild() {
  NameTable::Get().mutex().unlock();
  Recorder::Get().UnlockAfterFork();
  SessionState& s = State();
  if (s.active) {
    g_recording.store(false, std::memory_order_relaxed);
    s.writer->Abandon();
    s.writer.reset();
    s.drain = nullptr;  // the thread does not exist here; never join it
    s.active = false;
  }
  s.control.unlock();
}

struct ProcessHooks {
  ProcessHooks() { pthread_atfork(ForkPrepare, ForkParent, ForkChild); }
};
const ProcessHooks g_process_hooks;

}  // namespace

}  // namespace internal

using namespace internal;

const char* Version() { return SMPROF_VERSION; }

bool IsProfiling() { return g_recording.load(std::memory_order_relaxed); }

Status Start(const Config& config) {
  SessionState& s = State();
  std::lock_guard<std::mutex> lock(s.control);
  if (s.active) {
    return Status(StatusCode::kFailedPrecondition,
                  "profiling is already running (writing '" + s.last_stats.path + "'); stop it first");
  }
  ResolvedConfig resolved;
  if (Status st = ResolveConfig(config, ProcessEnv(), &resolved); !st.ok()) return st;
  if (DisabledByEnvironment()) {
    WarnOnce("SMP_DISABLE", "SMP_DISABLE is set: profiling is off and annotations are no-ops");
    return Status::Ok();
  }
  const RankInfo rank = DetectRankInfo(ProcessEnv());
  const ClockPair clock = ReadClockPair();
  const std::uint32_t session_index = s.next_session_index;
  const std::string path =
      ExpandRecordPath(resolved.record_file, rank, RecordPathFields{getpid(), clock.realtime_ns, session_index});
  std::string error;
  if (!MakeParentDirectories(path, &error)) return Status(StatusCode::kIoError, error);
  std::unique_ptr<TraceWriter> writer;
  if (Status st = TraceWriter::Create(path, resolved.compression_level, &writer); !st.ok()) return st;
  if (Status st = writer->Append(trace_format::kHeaderTag, MakeHeader(resolved, rank, clock, session_index));
      !st.ok()) {
    return st;
  }

  Recorder& recorder = Recorder::Get();
  recorder.pool().SetCapacity(static_cast<std::size_t>(resolved.bucket_count) * resolved.bucket_size_mb *
                              (std::size_t{1} << 20) / kChunkBytes);
  ClearOpenRanges();
  recorder.TakeDropped();

  static std::once_flag exit_hook;
  std::call_once(exit_hook, [] { std::atexit(StopAtExit); });

  s.config = std::move(resolved);
  s.writer = std::move(writer);
  s.start_ns = clock.monotonic_ns;
  s.next_session_index = session_index + 1;
  s.drained = DrainResult{};
  s.stop_requested.store(false, std::memory_order_relaxed);
  s.last_stats = SessionStats{};
  s.last_stats.path = path;
  s.drain = new std::thread(DrainLoop, &s);
  s.active = true;
  g_recording.store(true, std::memory_order_release);
  return Status::Ok();
}

Status Stop() {
  SessionState& s = State();
  std::lock_guard<std::mutex> lock(s.control);
  if (!s.active) return Status(StatusCode::kFailedPrecondition, "profiling is not running");
  g_recording.store(false, std::memory_order_release);
  s.stop_requested.store(true, std::memory_order_release);
  Recorder::Get().WakeDrain();
  s.drain->join();
  delete s.drain;
  s.drain = nullptr;
  s.active = false;

  const ClockPair clock = ReadClockPair();
  trace::Footer footer;
  footer.mutable_stop()->set_monotonic_ns(clock.monotonic_ns);
  footer.mutable_stop()->set_realtime_ns(clock.realtime_ns);
  footer.set_annotations_written(s.drained.written);
  footer.set_annotations_dropped(s.drained.dropped);
  footer.set_frames_written(s.drained.frames);
  footer.set_open_ranges_at_stop(CountOpenRanges());
  Status status = s.writer->Append(trace_format::kFooterTag, footer);
  if (Status closed = s.writer->Close(); status.ok()) status = closed;

  s.last_stats.annotations_written = s.drained.written;
  s.last_stats.annotations_dropped = s.drained.dropped;
  s.last_stats.frames_written = s.drained.frames;
  s.last_stats.bytes_written = s.writer->bytes_written();
  s.writer.reset();
  if (s.drained.dropped > 0) {
    std::ostringstream message;
    message << "dropped " << s.drained.dropped << " of " << (s.drained.written + s.drained.dropped)
            << " events because the buffer pool (BucketCount=" << s.config.bucket_count
            << " x BucketSizeMB=" << s.config.bucket_size_mb
            << ") was full; raise BucketCount or BucketSizeMB, or lower FlushIntervalMs";
    Warn(message.str());
  }
  return status;
}

SessionStats LastSessionStats() {
  SessionState& s = State();
  std::lock_guard<std::mutex> lock(s.control);
  return s.last_stats;
}

}  // namespace smprof
