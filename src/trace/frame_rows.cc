#include "trace/frame_rows.h"

#include <google/protobuf/stubs/logging.h>

#include "trace/frame_wire.h"

namespace smprof::internal {

namespace {

// A table's rows when its decoder succeeded; none (and the error) when not.
template <typename Row, typename DecodeFn>
Status DecodeTable(const trace::Frame& frame, std::vector<Row>* rows, DecodeFn decode) {
  Status status = decode(frame, rows);
  if (!status.ok()) rows->clear();
  return status;
}

}  // namespace

void FrameRows::Clear() {
  ClearKeepingRowTables();
  annotations.clear();
  gpu.clear();
  api_calls.clear();
  external_correlations.clear();
}

void FrameRows::ClearKeepingRowTables() {
  sequence = 0;
  dropped_total = 0;
  gpu_dropped_total = 0;
  strings.clear();
  threads.clear();
  has_gpu = false;
  has_api_calls = false;
  counters.clear();
  annotations_status = gpu_status = api_calls_status = external_correlations_status = counters_status = Status::Ok();
  cold_.Clear();
  cold_bytes_.clear();
  counter_series_.clear();
  tables_ = &cold_;
  message_parsed_ = false;
  decoded_by_walker_ = false;
}

bool FrameRows::Decode(std::string_view bytes) {
  // The walker sizes each row table to its frame and writes every field of
  // every row: rows kept from the frame before are overwritten, not zeroed first.
  ClearKeepingRowTables();
  bytes_ = bytes;
  decoded_by_walker_ = FrameWireDecoder::Decode(bytes, this);
  if (decoded_by_walker_) return true;
  Clear();
  if (!ParseMessage()) return false;
  Decode(message_);
  return true;
}

void FrameRows::Decode(const trace::Frame& frame) {
  if (&frame != &message_) Clear();
  sequence = frame.sequence();
  dropped_total = frame.dropped_total();
  gpu_dropped_total = frame.gpu_dropped_total();
  for (const std::string& s : frame.strings()) strings.emplace_back(s);
  for (const trace::Thread& t : frame.threads()) threads.push_back(ThreadRow{t.tid(), t.name()});
  has_gpu = frame.has_gpu();
  has_api_calls = frame.has_api_calls();
  annotations_status = DecodeTable(frame, &annotations, DecodeAnnotations);
  gpu_status = DecodeTable(frame, &gpu, DecodeGpuActivities);
  api_calls_status = DecodeTable(frame, &api_calls, DecodeApiCalls);
  external_correlations_status = DecodeTable(frame, &external_correlations, DecodeExternalCorrelations);
  counters_status = DecodeTable(frame, &counters, DecodeCounters);
  tables_ = &frame;
}

bool FrameRows::ParseMessage() const {
  google::protobuf::LogSilencer quiet;
  message_parsed_ = true;
  return message_.ParseFromArray(bytes_.data(), static_cast<int>(bytes_.size()));
}

const trace::Frame& FrameRows::message() const {
  if (tables_ != &cold_) return *tables_;
  if (!message_parsed_) ParseMessage();
  return message_;
}

}  // namespace smprof::internal
