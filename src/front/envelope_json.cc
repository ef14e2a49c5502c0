// SPDX-License-Identifier: Apache-2.0
// The envelope's JSON fields, written once for the CLI, the C API and Python (see
// stguard/verdict.h for the fields and when each is present).
#include "stguard/verdict.h"

#include <span>
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
  if (!result.unchecked.empty()) {
    *out += ",\"unchecked\":[";
    for (size_t i = 0; i < result.unchecked.size(); ++i) {
      if (i > 0) *out += ",";
      AppendJsonText(result.unchecked[i], out);
    }
    *out += "]";
  }
  if (result.verdict == Verdict::kValid) return;
  *out += ",\"code\":";
  AppendJsonString(ErrorCodeName(result.error.code), out);
  std::string message = result.error.message;
  if (!result.error.context.empty()) message += ": " + result.error.context;
  *out += ",\"message\":";
  AppendJsonText(message, out);
  if (ResultOffsetInFile(result)) {
    *out += ",\"offset\":" + std::to_string(result.error.offset);
  }
  if (!result.member.empty()) {
    *out += ",\"member\":";
    AppendJsonText(result.member, out);
  }
  *out += ",\"tensor\":";
  AppendJsonText(result.error.tensor, out);
}

void AppendWarningsJson(std::span<const Warning> warnings, std::string* out) {
  *out += "\"warnings\":[";
  for (size_t i = 0; i < warnings.size(); ++i) {
    if (i > 0) *out += ",";
    *out += "{\"kind\":";
    AppendJsonString(WarningKindName(warnings[i].kind), out);
    *out += ",\"file\":";
    AppendJsonText(warnings[i].file, out);
    *out += ",\"tensor\":";
    AppendJsonText(warnings[i].tensor, out);
    *out += ",\"message\":";
    AppendJsonText(warnings[i].message, out);
    *out += "}";
  }
  *out += "]";
}

std::string EnvelopeJson(const CheckResult& result) {
  std::string out = "{";
  AppendEnvelopeJson(result, &out);
  return out + "}";
}

}  // namespace stguard
