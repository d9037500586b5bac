#include "session/drain_loop.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "collectors/cuda/cuda_collection.h"
#include "collectors/cuda/gpu_record_buffer.h"
#include "runtime/collective_records.h"
#include "runtime/name_table.h"
#include "runtime/recorder.h"
#include "runtime/warnings.h"
#include "session/rank_file_sequence.h"
#include "trace/collective_codec.h"
#include "trace/file_format.h"
#include "trace/frame_codec.h"
#include "trace/gpu_codec.h"

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

DrainResult CountsSince(const DrainResult& now, const DrainResult& then) {
  DrainResult d;
  d.written = now.written - then.written;
  d.dropped = now.dropped - then.dropped;
  d.refused_open_ranges = now.refused_open_ranges - then.refused_open_ranges;
  d.names_cut = now.names_cut - then.names_cut;
  d.names_refused = now.names_refused - then.names_refused;
  d.frames = now.frames - then.frames;
  d.counter_samples = now.counter_samples - then.counter_samples;
  d.counter_samples_dropped = now.counter_samples_dropped - then.counter_samples_dropped;
  d.gpu_records = now.gpu_records - then.gpu_records;
  d.gpu_records_dropped = now.gpu_records_dropped - then.gpu_records_dropped;
  d.collectives = now.collectives - then.collectives;
  d.collectives_dropped = now.collectives_dropped - then.collectives_dropped;
  d.frames_lost_to_write_errors = now.frames_lost_to_write_errors - then.frames_lost_to_write_errors;
  d.annotations_lost_to_write_errors = now.annotations_lost_to_write_errors - then.annotations_lost_to_write_errors;
  if (d.frames_lost_to_write_errors > 0) d.last_write_error = now.last_write_error;
  return d;
}

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
  bool failing = false;  // the last frame could not be written
  trace::Frame frame;
  std::vector<CounterSample> samples;
  const TrackLookup tracks = [&job](std::uint32_t track) { return job.counters->TrackInfo(track); };
  std::vector<CollectiveRecord> collectives;
  GpuFrameEncoder gpu;
  std::vector<GpuBatch> gpu_batches;
  auto take_gpu = [&] {
    if (job.gpu == nullptr) return;
    gpu_batches.clear();
    result.gpu_records_dropped += job.gpu->Take(&gpu_batches);
    for (GpuBatch& batch : gpu_batches) gpu.Add(std::move(batch));
  };

  auto write_frame = [&] {
    samples.clear();
    result.counter_samples_dropped += job.counters->Take(&samples);
    collectives.clear();
    result.collectives_dropped += CollectiveRecords().Take(&collectives);
    // Calls that began before this session: a hook still running as the previous one stopped.
    collectives.erase(std::remove_if(collectives.begin(), collectives.end(),
                                     [&job](const CollectiveRecord& r) { return r.start_ns < job.start_ns; }),
                      collectives.end());
    if (builder.size() == 0 && samples.empty() && gpu.size() == 0 && collectives.empty()) return;
    builder.Build(result.frames, &frame, kMaxFrameEvents);
    // GPU rows share the frame's string and thread tables with the annotations.
    const std::uint64_t gpu_rows = gpu.Build(&builder.tables(), &frame, kMaxFrameEvents);
    frame.set_gpu_dropped_total(result.gpu_records_dropped);
    EncodeCounters(samples, tracks, &frame);
    EncodeCollectives(collectives, &builder.tables(), &frame);
    frame.set_collectives_dropped_total(result.collectives_dropped);
    result.dropped += recorder.TakeDropped();
    result.refused_open_ranges += recorder.TakeRefusedOpenRanges();
    result.names_cut += NameTable::Get().TakeCut();
    result.names_refused += NameTable::Get().TakeRefused();
    frame.set_dropped_total(result.dropped);
    const auto ranges = static_cast<std::uint64_t>(frame.annotations().dur_ns_size());
    // A failed frame is lost and counted; every later frame tries again (in
    // the next rotated file too), so writing resumes once space is back.
    if (Status st = job.files->Append(trace_format::kFrameTag, frame); !st.ok()) {
      if (!failing) {
        Warn(st.message() + "; the events of each frame that cannot be written are lost (counted in the footer)," +
             " writing is retried at every flush, training continues");
      }
      failing = true;
      result.last_write_error = st.message();
      ++result.frames_lost_to_write_errors;
      result.annotations_lost_to_write_errors += ranges;
      result.counter_samples_dropped += samples.size();
      result.gpu_records_dropped += gpu_rows;
      result.collectives_dropped += collectives.size();
      return;
    }
    if (failing) {
      Info("writing the trace works again; " + std::to_string(result.frames_lost_to_write_errors) +
           " frame(s) lost so far");
      failing = false;
    }
    result.written += ranges;
    result.counter_samples += samples.size();
    result.gpu_records += gpu_rows;
    result.collectives += collectives.size();
    ++result.frames;
  };
  // Only copies: DrainOnce holds the thread registry's lock around part of it.
  auto sink = [&](const AnnotationRecord* records, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      // Ranges closed by a thread that saw the previous session still recording.
      if (records[i].start_ns >= job.start_ns) builder.Add(records + i, 1);
    }
  };
  // Full frames are written as the chunks are read, not after: the drain's
  // copy of the events stays one frame, however full the pool was.
  auto write_full_frames = [&] {
    while (builder.size() >= kMaxFrameEvents || gpu.size() >= kMaxFrameEvents) write_frame();
  };
  auto drain = [&] {
    recorder.DrainOnce(sink, write_full_frames);
    take_gpu();
    write_full_frames();
  };

  std::int64_t last_frame_ns = NowNs();
  const std::int64_t interval_ns = static_cast<std::int64_t>(job.flush_interval_ms) * 1000000;
  while (!job.stop_requested->load(std::memory_order_acquire)) {
    recorder.WaitForWork(job.flush_interval_ms);
    const bool frame_due = NowNs() - last_frame_ns >= interval_ns;
    if (frame_due && job.gpu != nullptr) TickCudaCollection();  // CUPTI's finished records into job.gpu
    drain();
    if (frame_due) {
      write_frame();
      last_frame_ns = NowNs();
    }
    if (job.files->RotationDue(NowNs())) {
      // The boundary is between frames: everything drained so far goes into
      // the current file, everything after into the next.
      do {
        write_frame();
      } while (builder.size() + gpu.size() > 0);
      job.files->Rotate(result);
      gpu.ResendMetadata();  // each file describes its GPUs
      last_frame_ns = NowNs();
    }
  }
  // Twice: a thread exiting during the first pass queues its last chunk.
  drain();
  drain();
  do {
    write_frame();
  } while (builder.size() + gpu.size() > 0);
  result.dropped += recorder.TakeDropped();
  result.refused_open_ranges += recorder.TakeRefusedOpenRanges();
  result.names_cut += NameTable::Get().TakeCut();
  result.names_refused += NameTable::Get().TakeRefused();
}

}  // namespace smprof::internal
