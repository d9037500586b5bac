#include "session/session_end.h"

#include "trace/utf8_text.h"

namespace smprof::internal {

trace::SessionEnd ToProto(const SessionEnd& end) {
  trace::SessionEnd out;
  out.set_how(end.how);
  out.set_exit_code_known(end.exit_code.has_value());
  out.set_exit_code(end.exit_code.value_or(0));
  out.set_signal(end.signal);
  out.set_exception_type(ValidUtf8(end.exception_type));
  out.set_exception_message(CutText(ValidUtf8(end.exception_message), kMaxExceptionMessageBytes));
  return out;
}

}  // namespace smprof::internal
