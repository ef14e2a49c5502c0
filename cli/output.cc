#include "output.h"

#include "stguard/json_escape.h"

namespace stguard::cli {

void AppendErrorJson(const Error& error, std::string* out) {
  *out += "{\"code\":";
  AppendJsonString(ErrorCodeName(error.code), out);
  *out += ",\"offset\":" + std::to_string(error.offset) + ",\"message\":";
  AppendJsonString(error.message, out);
  *out += ",\"context\":";
  AppendJsonString(error.context, out);
  *out += ",\"tensor\":";
  AppendJsonString(error.tensor, out);
  *out += "}";
}

}  // namespace stguard::cli
