#include "collectors/cpu/cpu_sampler.h"

#include <pthread.h>
#include <unistd.h>

#include <chrono>

#include "smprof/annotate.h"

namespace smprof::internal {

namespace {

constexpr double kPercentResolution = 0.01;

}  // namespace

CpuSampler::CpuSampler(const CpuSamplerOptions& options, CounterBuffer* sink) : options_(options), sink_(sink) {
  if (options_.perf) perf_ = PerfCounters::Open(options_.perf_events);
}

CpuSampler::~CpuSampler() { Stop(); }

const std::vector<PerfEventStatus>& CpuSampler::perf_statuses() const {
  return perf_ != nullptr ? perf_->statuses() : no_perf_;
}

std::string CpuSampler::perf_per_cpu_reason() const { return perf_ != nullptr ? perf_->per_cpu_reason() : ""; }

std::string CpuSampler::perf_permissions() const { return perf_ != nullptr ? perf_->permissions() : ""; }

void CpuSampler::Start() {
  if (thread_ != nullptr || options_.duration_s == 0) return;
  SampleOnce(NowNs());  // the baseline for the first interval's shares
  thread_ = new std::thread(&CpuSampler::Run, this);
  pthread_setname_np(thread_->native_handle(), "smprof-sampler");
}

void CpuSampler::Stop() {
  if (thread_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_->join();
  delete thread_;
  thread_ = nullptr;
}

void CpuSampler::Abandon() {
  thread_ = nullptr;
  perf_.reset();  // a child's copies read the parent's counters; closing them is safe
}

void CpuSampler::Run() {
  // steady_clock is CLOCK_MONOTONIC, the trace timebase: the limit is exact
  // in trace time, and only the closing sample can fall after it.
  using Clock = std::chrono::steady_clock;
  const std::int64_t start_ns = options_.start_ns > 0 ? options_.start_ns : NowNs();
  const Clock::time_point end{std::chrono::nanoseconds(start_ns) + std::chrono::seconds(options_.duration_s)};
  auto next = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    next += std::chrono::milliseconds(options_.interval_ms);
    if (next > end) next = end;
    wake_.wait_until(lock, next, [this] { return stop_; });
    lock.unlock();
    SampleOnce(NowNs());
    lock.lock();
    if (Clock::now() >= end) {  // CpuProfilingDurationS is over
      finished_.store(true, std::memory_order_release);
      return;
    }
  }
}

std::uint32_t CpuSampler::TrackFor(const std::string& name, const char* unit, double resolution) {
  for (const auto& [known, id] : tracks_) {
    if (known == name) return id;
  }
  const std::uint32_t id = sink_->Track(name, unit, resolution);
  tracks_.emplace_back(name, id);
  return id;
}

void CpuSampler::SampleOnce(std::int64_t now_ns) {
  if (options_.machine_wide) SampleMachine(now_ns);
  SampleProcess(now_ns);
  if (perf_ != nullptr) {
    perf_values_.clear();
    perf_->Read(&perf_values_);
    for (const auto& [track, value] : perf_values_) {
      if (!options_.machine_wide && track.rfind("perf.cpu", 0) == 0) continue;  // per-CPU: machine-wide
      const char* unit = "count";
      for (const PerfEventStatus& status : perf_->statuses()) {
        if (status.track == track) unit = status.unit.c_str();
      }
      sink_->Add(TrackFor(track, unit, 1), now_ns, value);
    }
  }
}

void CpuSampler::SampleMachine(std::int64_t now_ns) {
  std::vector<CpuTimes> cpus = ParseProcStat(ReadProcFile("/proc/stat"));
  for (const CpuTimes& after : cpus) {
    for (const CpuTimes& before : previous_cpu_) {
      CpuShares shares;
      if (before.cpu != after.cpu || !ComputeShares(before, after, &shares)) continue;
      const std::string prefix = after.cpu < 0 ? "cpu." : "cpu" + std::to_string(after.cpu) + ".";
      sink_->Add(TrackFor(prefix + "utilization", "percent", kPercentResolution), now_ns, shares.utilization);
      sink_->Add(TrackFor(prefix + "user", "percent", kPercentResolution), now_ns, shares.user);
      sink_->Add(TrackFor(prefix + "system", "percent", kPercentResolution), now_ns, shares.system);
      sink_->Add(TrackFor(prefix + "iowait", "percent", kPercentResolution), now_ns, shares.iowait);
      sink_->Add(TrackFor(prefix + "idle", "percent", kPercentResolution), now_ns, shares.idle);
    }
  }
  previous_cpu_ = std::move(cpus);
  std::uint64_t total = 0, available = 0;
  if (ParseMeminfo(ReadProcFile("/proc/meminfo"), &total, &available)) {
    sink_->Add(TrackFor("machine.memory_used_bytes", "bytes", 1), now_ns, static_cast<double>(total - available));
  }
}

void CpuSampler::SampleProcess(std::int64_t now_ns) {
  ProcessStat process;
  if (ParseProcessStat(ReadProcFile("/proc/self/stat"), &process)) {
    if (previous_ns_ > 0 && now_ns > previous_ns_) {
      static const double tick_ns = 1e9 / static_cast<double>(sysconf(_SC_CLK_TCK));
      const auto ticks = static_cast<double>((process.utime_ticks + process.stime_ticks) -
                                             (previous_process_.utime_ticks + previous_process_.stime_ticks));
      sink_->Add(TrackFor("process.cpu_percent", "percent", kPercentResolution), now_ns,
                 100.0 * ticks * tick_ns / static_cast<double>(now_ns - previous_ns_));
    }
    static const long page_bytes = sysconf(_SC_PAGESIZE);
    sink_->Add(TrackFor("process.rss_bytes", "bytes", 1), now_ns, static_cast<double>(process.rss_pages * page_bytes));
    sink_->Add(TrackFor("process.threads", "count", 1), now_ns, static_cast<double>(process.threads));
    previous_process_ = process;
  }
  previous_ns_ = now_ns;
}

}  // namespace smprof::internal
