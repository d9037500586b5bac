#include "core/drain_loop.h"

#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/name_table.h"
#include "core/recorder.h"
#include "core/warnings.h"
#include "trace/file_format.h"
#include "trace/frame_codec.h"

namespace smprof::internal {

namespace {

// A frame is written when this many ranges are pending, or every flush interval.
constexpr std::size_t kMaxFrameEvents = 1 << 16;

std::string ThreadName(std::uint32_t tid) {
  std::ifstream comm("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

}  // namespace

void RunDrain(const DrainJob& job) {
  Recorder& recorder = Recorder::Get();
  std::unordered_map<std::uint32_t, std::string> thread_names;
  FrameBuilder builder([](NameId id) { return NameTable::Get().Lookup(id); },
                       [&thread_names](std::uint32_t tid) {
                         auto [it, added] = thread_names.try_emplace(tid);
                         if (added) it->second = ThreadName(tid);
                         return it->second;
                       });
  DrainResult& result = *job.result;
  bool writable = true;
  trace::Frame frame;
  std::vector<CounterSample> samples;
  const TrackLookup tracks = [&job](std::uint32_t track) { return job.counters->TrackInfo(track); };

  auto write_frame = [&] {
    samples.clear();
    result.counter_samples_dropped += job.counters->Take(&samples);
    if (builder.size() == 0 && samples.empty()) return;
    builder.Build(result.frames, &frame, kMaxFrameEvents);
    EncodeCounters(samples, tracks, &frame);
    result.dropped += recorder.TakeDropped();
    frame.set_dropped_total(result.dropped);
    const auto ranges = static_cast<std::uint64_t>(frame.annotations().dur_ns_size());
    if (writable) {
      if (Status st = job.writer->Append(trace_format::kFrameTag, frame); !st.ok()) {
        Warn(st.message() + "; events from now on are lost, training continues");
        writable = false;
      }
    }
    if (!writable) {
      result.dropped += ranges;
      result.counter_samples_dropped += samples.size();
      return;
    }
    result.written += ranges;
    result.counter_samples += samples.size();
    ++result.frames;
  };
  // Only copies: DrainOnce holds the thread registry's lock around part of it.
  auto sink = [&](const AnnotationRecord* records, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      // Ranges closed by a thread that saw the previous session still recording.
      if (records[i].start_ns >= job.start_ns) builder.Add(records + i, 1);
    }
  };
  auto drain = [&] {
    recorder.DrainOnce(sink);
    while (builder.size() >= kMaxFrameEvents) write_frame();
  };

  std::int64_t last_frame_ns = NowNs();
  const std::int64_t interval_ns = static_cast<std::int64_t>(job.flush_interval_ms) * 1000000;
  while (!job.stop_requested->load(std::memory_order_acquire)) {
    recorder.WaitForWork(job.flush_interval_ms);
    drain();
    if (NowNs() - last_frame_ns >= interval_ns) {
      write_frame();
      last_frame_ns = NowNs();
    }
  }
  // Twice: a thread exiting during the first pass queues its last chunk.
  drain();
  drain();
  do {
    write_frame();
  } while (builder.size() > 0);
  result.dropped += recorder.TakeDropped();
}

}  // namespace smprof::internal
