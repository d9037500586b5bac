// A host program with protobuf-lite and zstd of its own (Debian's shared
// libraries, loaded before libsmprof and so first in the global symbol scope)
// that uses both and profiles itself with libsmprof. host_libraries_check.cmake
// runs it under LD_DEBUG=bindings: libsmprof must bind none of its protobuf or
// zstd symbols to the host's copies, and both sides must work.
//   host_libraries_consumer TRACE_FILE
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <smprof/smprof.h>
#include <zstd.h>

#include <cstdio>
#include <string>

namespace {

constexpr int kSteps = 100;

bool HostZstdRoundTrips() {
  const std::string text(4096, 'x');
  std::string packed(ZSTD_compressBound(text.size()), '\0');
  const size_t packed_size = ZSTD_compress(packed.data(), packed.size(), text.data(), text.size(), 3);
  if (ZSTD_isError(packed_size)) return false;
  std::string unpacked(text.size(), '\0');
  const size_t size = ZSTD_decompress(unpacked.data(), unpacked.size(), packed.data(), packed_size);
  return !ZSTD_isError(size) && unpacked == text;
}

bool HostProtobufEncodes() {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.WriteVarint64(300);
  }
  return bytes == "\xac\x02";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s TRACE_FILE\n", argv[0]);
    return 2;
  }
  if (!HostZstdRoundTrips() || !HostProtobufEncodes()) {
    std::fprintf(stderr, "the host's own zstd or protobuf failed\n");
    return 1;
  }
  smprof::Config config;
  config.Set("RecordFile", argv[1]);
  if (smprof::Status s = smprof::Start(config); !s.ok()) {
    std::fprintf(stderr, "Start: %s\n", s.message().c_str());
    return 1;
  }
  for (int i = 0; i < kSteps; ++i) {
    SMPROF_ANNOTATE("step");
    if (!HostZstdRoundTrips()) return 1;
  }
  if (smprof::Status s = smprof::Stop(); !s.ok()) {
    std::fprintf(stderr, "Stop: %s\n", s.message().c_str());
    return 1;
  }
  const smprof::SessionStats stats = smprof::LastSessionStats();
  if (stats.annotations_written != kSteps || stats.bytes_written == 0) {
    std::fprintf(stderr, "wrote %llu annotations, %llu bytes; expected %d annotations\n",
                 static_cast<unsigned long long>(stats.annotations_written),
                 static_cast<unsigned long long>(stats.bytes_written), kSteps);
    return 1;
  }
  return HostProtobufEncodes() ? 0 : 1;
}
