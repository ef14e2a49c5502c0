// SPDX-License-Identifier: Apache-2.0
// The envelope's JSON fields, written once for the CLI, the C API and Python (see
// stguard/verdict.h for the fields and when each is present).
#include "stguard/verdict.h"

#include <string>

#include "stguard/json_escape.h"

namespace stguard {

void AppendEnvelopeJson(const CheckResult& result, std::string* out) {
  *out += "\"schema_version\":" + std::to_string(kEnvelopeSchemaVersion) + ",\"file\":";
  AppendJsonText(result.file, out);
  *out += ",\"format\":";
  AppendJsonString(result.is_folder ? "folder" : FormatName(result.format), out);
  *out += ",\"verdict\":";
  AppendJsonString(VerdictName(result.verdict), out);
  if (result.verdict == Verdict::kValid) return;
  *out += ",\"code\":";
  AppendJsonString(ErrorCodeName(result.error.code), out);
  std::string message = result.error.message;
  if (!result.error.context.empty()) message += ": " + result.error.context;
  *out += ",\"message\":";
  AppendJsonText(message, out);
  if (!result.member.empty()) {
    *out += ",\"member\":";
    AppendJsonText(result.member, out);
  }
  if (ResultOffsetInFile(result)) {
    *out += ",\"offset\":" + std::to_string(result.error.offset);
  }
  *out += ",\"tensor\":";
  AppendJsonText(result.error.tensor, out);
}

std::string EnvelopeJson(const CheckResult& result) {
  std::string out = "{";
  AppendEnvelopeJson(result, &out);
  return out + "}";
}

}  // namespace stguard
