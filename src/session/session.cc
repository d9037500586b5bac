// Sessions: Start/Stop, and the process-lifetime hooks (atexit, fork).
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "collectors/cpu/cpu_sampler.h"
#include "collectors/cuda/cuda_collection.h"
#include "collectors/cuda/gpu_collection_report.h"
#include "collectors/cuda/gpu_record_buffer.h"
#include "runtime/clock_anchor.h"
#include "runtime/collective_records.h"
#include "runtime/counter_buffer.h"
#include "runtime/name_table.h"
#include "runtime/recorder.h"
#include "runtime/resolved_config.h"
#include "runtime/warnings.h"
#include "session/clock_alignment_log.h"
#include "session/closed_file_queue.h"
#include "session/drain_loop.h"
#include "session/file_header.h"
#include "session/rank_file_sequence.h"
#include "session/rank_info.h"
#include "session/record_path.h"
#include "session/session_end.h"
#include "session/sigterm_stop.h"
#include "smprof/smprof.h"
#include "trace/file_format.h"
#include "trace/trace_writer.h"

#ifndef SMPROF_VERSION
#error "SMPROF_VERSION must be defined by the build"
#endif

namespace smprof {

namespace internal {

namespace {

// Counter samples buffered between two frames, at most (about 24 MiB).
constexpr std::size_t kMaxCounterSamples = 1 << 20;

// How long a SIGTERM waits for the session to stop before the process goes on
// to end (docs/CONFIG.md, StopOnSigterm).
constexpr std::chrono::seconds kSigtermStopTimeout{10};

struct SessionState {
  std::mutex control;  // serializes Start, Stop and fork
  bool active = false;
  std::uint32_t next_session_index = 0;
  ResolvedConfig config;
  std::unique_ptr<RankFileSequence> files;
  std::unique_ptr<CounterBuffer> counters;
  std::unique_ptr<CpuSampler> sampler;
  std::unique_ptr<GpuRecordBuffer> gpu_records;  // null when GPU collection is off
  CudaCollectionTotals gpu_totals;               // of the last session, set at stop
  std::thread* drain = nullptr;                  // a pointer: a forked child must never destroy it
  std::atomic<bool> stop_requested{false};
  DrainResult drained;  // written by the drain thread, read after join
  SessionStats last_stats;
};

SessionState& State() {
  static auto* state = new SessionState();  // leaked: usable from exit handlers
  return *state;
}

// Forgets every handle range left open by an earlier session.
void ClearOpenRanges() {
  Recorder& recorder = Recorder::Get();
  std::lock_guard<std::mutex> lock(recorder.registry_mutex());
  recorder.ForEachThreadLocked([](ThreadState* thread) {
    std::lock_guard<std::mutex> open_lock(thread->open_mutex);
    thread->ForgetOpenRanges();
  });
}

// Handle ranges (of running and exited threads) and RAII/with scopes open at
// stop: none of them is recorded.
std::uint64_t CountOpenRanges() {
  Recorder& recorder = Recorder::Get();
  std::uint64_t open = 0;
  std::lock_guard<std::mutex> lock(recorder.registry_mutex());
  recorder.ForEachThreadLocked([&open](ThreadState* thread) {
    open += thread->OpenRanges() + thread->scope_depth.load(std::memory_order_relaxed);
  });
  return open;
}

bool DisabledByEnvironment() {
  const char* value = std::getenv("SMP_DISABLE");
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

// The exit and SIGTERM stops never wait for the GPU (a stuck kernel, a
// collective whose peers are gone, would hang the exit).
constexpr char kExitStopReason[] = "the exit stop never waits for the GPU";

void StopOnExit(int status, void*) {
  SessionEnd end;
  end.how = "exit";
  end.exit_code = status;
  if (IsProfiling()) StopAtEnd(end);
}

void StopAtSigterm() {
  SessionEnd end;
  end.how = "signal";
  end.signal = SIGTERM;
  if (IsProfiling()) StopAtEnd(end);
}

// A followed child forked from a thread other than the main one runs on that
// thread alone, and no exit() ends it: when the thread returns, it leaves
// through pthread_exit, and the process ends only once its last thread has.
// The child's own drain and sampler threads would keep it alive for ever; the
// forking thread's exit stops the session (last frame, footer), which ends
// them. Run by the thread-specific data destructor below.
void StopWhenTheForkingThreadExits(void*) {
  SessionEnd end;
  end.how = "exit";
  if (IsProfiling()) StopAtEnd(end);
}

pthread_key_t ForkingThreadKey() {
  static const pthread_key_t key = [] {
    pthread_key_t k;
    pthread_key_create(&k, StopWhenTheForkingThreadExits);
    return k;
  }();
  return key;
}

void ForkPrepare() {
  State().control.lock();
  Recorder::Get().LockForFork();
  NameTable::Get().mutex().lock();
  CollectiveRecords().LockForFork();
  ClosedFileQueue::Get().LockForFork();
}

void ForkParent() {
  ClosedFileQueue::Get().UnlockAfterFork(false);
  CollectiveRecords().UnlockAfterFork();
  NameTable::Get().mutex().unlock();
  Recorder::Get().UnlockAfterFork();
  State().control.unlock();
}

// A rank's worker process: a followed forked child, or ProcessRole=worker.
bool IsWorker(const ResolvedConfig& config, const std::string& parent_trace) {
  return config.worker_process || !parent_trace.empty();
}

// Starts a session with a resolved configuration; caller holds s.control.
// `parent_trace` is set when following a forked child.
Status StartLocked(SessionState& s, const ResolvedConfig& config, const ClockPair& clock,
                   const std::string& parent_trace) {
  const RankInfo rank = DetectRankInfo(ProcessEnv());
  const std::uint32_t session_index = s.next_session_index;
  const std::string path =
      ExpandRecordPath(config.record_file, rank, RecordPathFields{getpid(), clock.realtime_ns, session_index});
  std::string error;
  if (!MakeParentDirectories(path, &error)) return Status(StatusCode::kIoError, error);
  std::unique_ptr<TraceWriter> writer;
  if (Status st = TraceWriter::Create(path, config.compression_level, &writer); !st.ok()) return st;

  auto counters = std::make_unique<CounterBuffer>(kMaxCounterSamples);
  std::unique_ptr<CpuSampler> sampler;
  const std::vector<PerfEventStatus> no_perf;
  if (config.cpu_duration_s > 0) {
    sampler = std::make_unique<CpuSampler>(
        CpuSamplerOptions{config.cpu_sample_interval_ms, config.cpu_duration_s, clock.monotonic_ns, config.enable_perf,
                          config.perf_events, !IsWorker(config, parent_trace)},
        counters.get());
  }
  HeaderInputs header{&config, &rank, clock, session_index, &no_perf, "", "", parent_trace};
  if (sampler) {
    header.perf_events = &sampler->perf_statuses();
    header.perf_per_cpu_reason = sampler->perf_per_cpu_reason();
    header.perf_permissions = sampler->perf_permissions();
  }
  auto gpu_records = std::make_unique<GpuRecordBuffer>(GpuRecordLimit(config));
  const CudaCollectionStatus cuda = StartCudaCollection(config, gpu_records.get());
  if (!cuda.active) gpu_records.reset();
  header.cuda = &cuda;
  trace::FileHeader file_header = MakeFileHeader(header);
  if (Status st = writer->Append(trace_format::kHeaderTag, file_header); !st.ok()) {
    StopCudaCollection();
    return st;
  }
  auto files = std::make_unique<RankFileSequence>(std::move(writer), std::move(file_header), config.compression_level,
                                                  config.rotate_interval_s, clock.monotonic_ns);

  Recorder& recorder = Recorder::Get();
  recorder.pool().SetCapacity(static_cast<std::size_t>(config.bucket_count) * config.bucket_size_mb *
                              (std::size_t{1} << 20) / kChunkBytes);
  ClearOpenRanges();
  ClearClockAlignments();
  recorder.TakeDropped();
  recorder.TakeRefusedOpenRanges();
  NameTable::Get().TakeCut();  // names cut or refused before this session are not its loss
  NameTable::Get().TakeRefused();
  std::vector<CollectiveRecord> earlier;  // calls of no session, and their drops, are not this session's
  CollectiveRecords().Take(&earlier);

  static std::once_flag exit_hook;
  std::call_once(exit_hook, [] { on_exit(StopOnExit, nullptr); });
  // atexit handlers run in reverse order: registered again once CUPTI is
  // loaded (its own exit-time teardown registered before), the stop, and its
  // CUPTI flush, run before CUPTI tears itself down.
  static std::once_flag cuda_exit_hook;
  if (cuda.active) std::call_once(cuda_exit_hook, [] { on_exit(StopOnExit, nullptr); });
  if (config.stop_on_sigterm) StopOnSigterm(StopAtSigterm, kSigtermStopTimeout);

  s.config = config;
  s.files = std::move(files);
  s.counters = std::move(counters);
  s.sampler = std::move(sampler);
  s.gpu_records = std::move(gpu_records);
  s.next_session_index = session_index + 1;
  s.drained = DrainResult{};
  s.stop_requested.store(false, std::memory_order_relaxed);
  s.last_stats = SessionStats{};
  s.last_stats.path = path;
  s.drain =
      new std::thread(RunDrain, DrainJob{s.files.get(), s.counters.get(), clock.monotonic_ns, config.flush_interval_ms,
                                         &s.stop_requested, &s.drained, s.gpu_records.get()});
  pthread_setname_np(s.drain->native_handle(), "smprof-drain");  // what `top -H`, py-spy and gdb show
  if (s.sampler) s.sampler->Start();
  s.active = true;
  g_recording.store(true, std::memory_order_release);
  return Status::Ok();
}

Status StopLocked(SessionState& s, const std::string& no_gpu_wait_reason, const SessionEnd& end) {
  g_recording.store(false, std::memory_order_release);
  ReleaseSigterm();
  if (s.sampler) s.sampler->Stop();  // its last sample goes into the last frame
  // Flushes CUPTI's last records into s.gpu_records for the last frame.
  s.gpu_totals = StopCudaCollection(no_gpu_wait_reason);
  s.stop_requested.store(true, std::memory_order_release);
  Recorder::Get().WakeDrain();
  s.drain->join();
  delete s.drain;
  s.drain = nullptr;
  s.active = false;

  if (s.gpu_totals.collected) s.files->SetGpuCollectionReport(GpuCollectionReportOf(s.gpu_totals.losses));
  s.files->SetSessionEnd(ToProto(end));
  const Status status = s.files->Finish(s.drained, CountOpenRanges(), s.gpu_totals.cupti_dropped);

  s.last_stats.annotations_written = s.drained.written;
  s.last_stats.annotations_dropped =
      s.drained.dropped + s.drained.annotations_lost_to_write_errors + s.drained.refused_open_ranges;
  s.last_stats.frames_written = s.drained.frames;
  s.last_stats.bytes_written = s.files->bytes_written();
  s.files.reset();
  s.sampler.reset();
  s.counters.reset();
  s.gpu_records.reset();
  if (s.gpu_totals.cupti_dropped > 0 || s.gpu_totals.buffers_refused > 0) {
    Warn("CUPTI lost " + std::to_string(s.gpu_totals.cupti_dropped) + " GPU records (" +
         std::to_string(s.gpu_totals.buffers_refused) + " buffer requests refused: CudaBufferMB=" +
         std::to_string(s.config.cuda_buffer_mb) + " was full); raise CudaBufferMB or lower FlushIntervalMs");
  }
  WarnAboutGpuCollection(s.gpu_totals.losses, s.gpu_totals.timebase);
  if (s.drained.frames_lost_to_write_errors > 0) {
    Warn("lost " + std::to_string(s.drained.frames_lost_to_write_errors) + " frame(s) with " +
         std::to_string(s.drained.annotations_lost_to_write_errors) +
         " annotations that could not be written (last error: " + s.drained.last_write_error +
         "); the footer counts them");
  }
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

// A followed forked child's session, started by its first recorded event.
struct PendingChild {
  bool pending = false;
  ClockPair fork_clock{};  // the session starts at the fork: the first range began after it
  std::string parent_trace;
};

PendingChild& Pending() {
  static auto* pending = new PendingChild();
  return *pending;
}

void StartPendingChild() {
  SessionState& s = State();
  std::lock_guard<std::mutex> lock(s.control);
  PendingChild& child = Pending();
  if (!child.pending) return;
  child.pending = false;
  if (Status st = StartLocked(s, s.config, child.fork_clock, child.parent_trace); !st.ok()) {
    g_recording.store(false, std::memory_order_relaxed);
    Warn("EnableForkFollow: the forked child " + std::to_string(getpid()) + " records nothing: " + st.message());
  }
}

// The child has only the forking thread: the parent's drain and sampler
// threads are gone, and their objects may hold locks; they are left alone
// (leaked), and the parent's file is never written. With EnableForkFollow=1
// the child keeps recording, and its first event starts a session of its own
// into its own file.
void ForkChild() {
  AbandonCudaCollectionInChild();
  ForgetSigtermStopInChild();
  ClosedFileQueue::Get().UnlockAfterFork(true);
  CollectiveRecords().UnlockAfterFork();
  NameTable::Get().mutex().unlock();
  Recorder::Get().UnlockAfterFork();
  Recorder::Get().ResetInChild();
  SessionState& s = State();
  Pending().pending = false;
  if (s.active) {
    g_recording.store(false, std::memory_order_relaxed);
    s.files->Abandon();
    s.files.reset();
    s.drain = nullptr;
    if (s.sampler) s.sampler->Abandon();
    static_cast<void>(s.sampler.release());
    static_cast<void>(s.counters.release());
    static_cast<void>(s.gpu_records.release());
    s.active = false;
    if (s.config.enable_fork_follow) {
      Pending() = PendingChild{true, ReadClockPair(), s.last_stats.path};
      Recorder::Get().StartOnFirstEvent(StartPendingChild);
      g_recording.store(true, std::memory_order_relaxed);
      pthread_setspecific(ForkingThreadKey(), &Pending());  // any non-null value
    }
  }
  s.control.unlock();
}

struct ProcessHooks {
  ProcessHooks() {
    ForkingThreadKey();  // created before any fork: the child only sets it
    pthread_atfork(ForkPrepare, ForkParent, ForkChild);
  }
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
  if (Pending().pending) {  // a followed child starting its own session instead
    Pending().pending = false;
    Recorder::Get().CancelStartOnFirstEvent();
  }
  return StartLocked(s, resolved, ReadClockPair(), "");
}

namespace {

// `no_gpu_wait_reason` "": the stop may wait for the GPU.
Status StopSession(const std::string& no_gpu_wait_reason, const SessionEnd& end) {
  SessionState& s = State();
  std::lock_guard<std::mutex> lock(s.control);
  if (Pending().pending) {  // a followed child that never recorded: nothing to write
    Pending().pending = false;
    Recorder::Get().CancelStartOnFirstEvent();
    g_recording.store(false, std::memory_order_relaxed);
    return Status::Ok();
  }
  if (!s.active) return Status(StatusCode::kFailedPrecondition, "profiling is not running");
  return StopLocked(s, no_gpu_wait_reason, end);
}

}  // namespace

namespace internal {

Status StopAtEnd(const SessionEnd& end) { return StopSession(kExitStopReason, end); }

}  // namespace internal

Status Stop() { return StopSession("", SessionEnd()); }

Status StopWithoutGpuWait(const std::string& why) {
  return StopSession(why.empty() ? "stopped without waiting for the GPU" : why, SessionEnd());
}

SessionStats LastSessionStats() {
  SessionState& s = State();
  std::lock_guard<std::mutex> lock(s.control);
  return s.last_stats;
}

}  // namespace smprof
