// The job's timeline in Perfetto's native protobuf trace format (a Trace of
// TracePackets with TrackDescriptors and TrackEvents), which ui.perfetto.dev
// and trace_processor load. Far smaller and faster to load than the Chrome
// JSON: names are interned, timestamps are integers. Hand-encoded from the
// documented field numbers of Perfetto's protos (no Perfetto dependency) and
// streamed like the Chrome export. docs/EXPORT.md describes the tracks.
// protoc's lite classes were measured as fast, but they write fields in number
// order, so they would change every file's bytes (docs/BENCHMARKS.md,
// "Perfetto encoding: hand-written or generated").
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/timeline/slice_args.h"
#include "analysis/timeline/timeline_export.h"
#include "trace/utf8_text.h"

namespace smprof::analysis {

namespace {

// Field numbers of perfetto/protos/perfetto/trace/ (trace.proto,
// trace_packet.proto, track_event/track_event.proto, track_descriptor.proto,
// process_descriptor.proto, thread_descriptor.proto, counter_descriptor.proto,
// debug_annotation.proto, interned_data/interned_data.proto).
namespace field {
constexpr std::uint32_t kTracePacket = 1;  // Trace.packet
// TracePacket
constexpr std::uint32_t kTimestamp = 8;
constexpr std::uint32_t kTrustedPacketSequenceId = 10;
constexpr std::uint32_t kTrackEvent = 11;
constexpr std::uint32_t kInternedData = 12;
constexpr std::uint32_t kSequenceFlags = 13;
constexpr std::uint32_t kTrackDescriptor = 60;
// TrackDescriptor
constexpr std::uint32_t kUuid = 1;
constexpr std::uint32_t kName = 2;
constexpr std::uint32_t kProcess = 3;
constexpr std::uint32_t kThread = 4;
constexpr std::uint32_t kParentUuid = 5;
constexpr std::uint32_t kCounter = 8;
constexpr std::uint32_t kChildOrdering = 11;
constexpr std::uint32_t kSiblingOrderRank = 12;
// ProcessDescriptor / ThreadDescriptor / CounterDescriptor
constexpr std::uint32_t kPid = 1;
constexpr std::uint32_t kProcessName = 6;
constexpr std::uint32_t kTid = 2;
constexpr std::uint32_t kThreadName = 5;
constexpr std::uint32_t kUnitName = 6;
// TrackEvent
constexpr std::uint32_t kDebugAnnotations = 4;
constexpr std::uint32_t kType = 9;
constexpr std::uint32_t kNameIid = 10;
constexpr std::uint32_t kTrackUuid = 11;
constexpr std::uint32_t kDoubleCounterValue = 44;
constexpr std::uint32_t kFlowIds = 47;
constexpr std::uint32_t kTerminatingFlowIds = 48;
// DebugAnnotation
constexpr std::uint32_t kAnnotationNameIid = 1;
constexpr std::uint32_t kIntValue = 4;
constexpr std::uint32_t kStringValue = 6;
// InternedData; EventName and DebugAnnotationName are {iid = 1, name = 2}
constexpr std::uint32_t kEventNames = 2;
constexpr std::uint32_t kDebugAnnotationNames = 3;
constexpr std::uint32_t kIid = 1;
constexpr std::uint32_t kInternedName = 2;
}  // namespace field

constexpr std::uint64_t kTypeSliceBegin = 1;
constexpr std::uint64_t kTypeSliceEnd = 2;
constexpr std::uint64_t kTypeCounter = 4;
constexpr std::uint64_t kSeqIncrementalStateCleared = 1;
constexpr std::uint64_t kSeqNeedsIncrementalState = 2;
constexpr std::uint64_t kChildOrderingExplicit = 3;
// Interned names kept before the sequence's incremental state is cleared and
// interning starts over: bounds memory for traces with unbounded names.
constexpr std::size_t kMaxInternedNames = 1u << 16;
// Process tracks' uuids, apart from the walker's track uuids (process id << 32 | n).
constexpr std::uint64_t kProcessUuidBase = std::uint64_t{1} << 62;

// Protobuf wire format, appended to a string.
class ProtoBytes {
 public:
  void Varint(std::uint32_t field, std::uint64_t v) {
    Key(field, 0);
    PutVarint(v);
  }
  void Fixed64(std::uint32_t field, std::uint64_t v) {
    Key(field, 1);
    for (int i = 0; i < 8; ++i) data_ += static_cast<char>(v >> (8 * i));
  }
  void Double(std::uint32_t field, double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    Fixed64(field, bits);
  }
  void Bytes(std::uint32_t field, std::string_view bytes) {
    Key(field, 2);
    PutVarint(bytes.size());
    data_ += bytes;
  }
  // A string field: Perfetto's are UTF-8, trace names are bytes.
  void Text(std::uint32_t field, std::string_view text) { Bytes(field, internal::ValidUtf8(text)); }
  void Message(std::uint32_t field, const ProtoBytes& message) { Bytes(field, message.data_); }
  const std::string& data() const { return data_; }
  bool empty() const { return data_.empty(); }
  void clear() { data_.clear(); }

 private:
  void Key(std::uint32_t field, std::uint32_t wire_type) { PutVarint((std::uint64_t{field} << 3) | wire_type); }
  void PutVarint(std::uint64_t v) {
    while (v >= 0x80) {
      data_ += static_cast<char>(v | 0x80);
      v >>= 7;
    }
    data_ += static_cast<char>(v);
  }
  std::string data_;
};

class PerfettoWriter : public TimelineWriter {
 public:
  explicit PerfettoWriter(ExportOutput* out) : out_(out) {}

  void OnStart(const TimelineJob&) override {}

  void BeginSegment(const TimelineJob&, std::uint32_t sequence) override {
    sequence_ = sequence;
    names_.clear();
    arg_names_.clear();
    state_cleared_ = false;
  }

  void Finish() override {}

  void OnProcess(const TimelineProcess& p) override {
    ProtoBytes& process = nested_[0];
    process.clear();
    process.Varint(field::kPid, p.id);
    process.Text(field::kProcessName, p.name);
    descriptor_.clear();
    descriptor_.Varint(field::kUuid, kProcessUuidBase + p.id);
    descriptor_.Message(field::kProcess, process);
    descriptor_.Varint(field::kChildOrdering, kChildOrderingExplicit);
    descriptor_.Varint(field::kSiblingOrderRank, static_cast<std::uint64_t>(p.sort_index));
    WriteDescriptor();
  }

  void OnTrack(const TimelineTrack& t) override {
    descriptor_.clear();
    descriptor_.Varint(field::kUuid, t.uuid);
    ProtoBytes& detail = nested_[0];
    detail.clear();
    if (t.kind == TrackKind::kThread) {
      detail.Varint(field::kPid, t.process);
      detail.Varint(field::kTid, t.tid);
      detail.Text(field::kThreadName, t.name);
      descriptor_.Message(field::kThread, detail);
    } else {
      descriptor_.Text(field::kName, t.name);
      descriptor_.Varint(field::kParentUuid, kProcessUuidBase + t.process);
      if (t.kind == TrackKind::kCounter) {
        detail.Text(field::kUnitName, t.unit);
        descriptor_.Message(field::kCounter, detail);
      }
    }
    descriptor_.Varint(field::kSiblingOrderRank, static_cast<std::uint64_t>(t.sort_index));
    WriteDescriptor();
  }

  void OnSlice(const TimelineSlice& s) override {
    ResetInterningIfFull();
    event_.clear();
    interned_.clear();
    event_.Varint(field::kType, kTypeSliceBegin);
    event_.Varint(field::kTrackUuid, s.track->uuid);
    event_.Varint(field::kNameIid, Intern(&names_, field::kEventNames, s.name));
    args_.clear();
    CollectSliceArgs(s, &args_);
    for (const SliceArg& arg : args_) {
      ProtoBytes& annotation = nested_[1];
      annotation.clear();
      annotation.Varint(field::kAnnotationNameIid, Intern(&arg_names_, field::kDebugAnnotationNames, arg.key));
      if (arg.is_string) {
        annotation.Text(field::kStringValue, arg.string_value);
      } else {
        annotation.Varint(field::kIntValue, static_cast<std::uint64_t>(arg.int_value));
      }
      event_.Message(field::kDebugAnnotations, annotation);
    }
    if (s.flow_id != 0) event_.Fixed64(s.gpu != nullptr ? field::kTerminatingFlowIds : field::kFlowIds, s.flow_id);
    WriteEventPacket(s.start_wall_ns, true);

    event_.clear();
    event_.Varint(field::kType, kTypeSliceEnd);
    event_.Varint(field::kTrackUuid, s.track->uuid);
    WriteEventPacket(s.start_wall_ns + s.dur_ns, false);
  }

  void OnCounter(const TimelineTrack& t, std::int64_t wall_ns, double value) override {
    event_.clear();
    event_.Varint(field::kType, kTypeCounter);
    event_.Varint(field::kTrackUuid, t.uuid);
    event_.Double(field::kDoubleCounterValue, value);
    WriteEventPacket(wall_ns, false);
  }

  // Flows are the slices' flow ids: the launch starts one, its GPU work ends it.
  void OnFlow(std::uint64_t, const TimelineTrack&, std::int64_t, const TimelineTrack&, std::int64_t) override {}

 private:
  // Keys view into `storage`, so lookups of a name seen before allocate nothing.
  struct Interned {
    std::unordered_map<std::string_view, std::uint64_t> ids;
    std::deque<std::string> storage;
    void clear() {
      ids.clear();
      storage.clear();
    }
  };

  void ResetInterningIfFull() {
    if (names_.ids.size() < kMaxInternedNames && arg_names_.ids.size() < kMaxInternedNames) return;
    names_.clear();
    arg_names_.clear();
    state_cleared_ = false;
  }

  // The iid of `name` in `table`; a new one is added to this packet's
  // InternedData under `interned_field`.
  std::uint64_t Intern(Interned* table, std::uint32_t interned_field, std::string_view name) {
    if (const auto it = table->ids.find(name); it != table->ids.end()) return it->second;
    const std::uint64_t iid = table->ids.size() + 1;
    table->ids.emplace(table->storage.emplace_back(name), iid);
    ProtoBytes& entry = nested_[2];
    entry.clear();
    entry.Varint(field::kIid, iid);
    entry.Text(field::kInternedName, name);
    interned_.Message(interned_field, entry);
    return iid;
  }

  // `interning`: the event refers to interned names, so the packet says it
  // needs the sequence's incremental state (slice ends and counters do not).
  void WriteEventPacket(std::int64_t wall_ns, bool interning) {
    packet_.clear();
    packet_.Varint(field::kTimestamp, static_cast<std::uint64_t>(wall_ns));
    packet_.Message(field::kTrackEvent, event_);
    if (!interned_.empty()) packet_.Message(field::kInternedData, interned_);
    interned_.clear();
    packet_.Varint(field::kTrustedPacketSequenceId, sequence_);
    if (interning) {
      packet_.Varint(field::kSequenceFlags, state_cleared_ ? kSeqNeedsIncrementalState : kSeqIncrementalStateCleared);
      state_cleared_ = true;
    }
    WritePacket();
  }

  void WriteDescriptor() {
    packet_.clear();
    packet_.Message(field::kTrackDescriptor, descriptor_);
    packet_.Varint(field::kTrustedPacketSequenceId, sequence_);
    WritePacket();
  }

  void WritePacket() {
    framed_.clear();
    framed_.Message(field::kTracePacket, packet_);
    out_->Write(framed_.data());
  }

  ExportOutput* out_;
  // Reused buffers: the packet, its parts, and the packet framed in the Trace.
  ProtoBytes packet_, event_, interned_, descriptor_, framed_;
  ProtoBytes nested_[3];
  std::vector<SliceArg> args_;
  Interned names_, arg_names_;
  std::uint32_t sequence_ = 1;  // the trusted packet sequence id of the packets written
  bool state_cleared_ = false;  // whether a packet has told readers the sequence starts fresh
};

}  // namespace

std::unique_ptr<TimelineWriter> NewPerfettoWriter(ExportOutput* out) { return std::make_unique<PerfettoWriter>(out); }

}  // namespace smprof::analysis
