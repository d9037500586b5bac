// smprof::Status: the result of every fallible call of the C++ API.
//
// The API never throws. A call that can fail returns a Status; ok() tells
// whether it succeeded and message() says what went wrong in words a user can
// act on (for a configuration error: the key and its valid values).
#pragma once

#include <string>
#include <utility>

namespace smprof {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument = 1,     // bad configuration key or value
  kFailedPrecondition = 2,  // call made in the wrong state (e.g. stop without start)
  kIoError = 3,             // the trace file could not be created or written
  kInternal = 4,
};

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

}  // namespace smprof
