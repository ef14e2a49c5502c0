// SPDX-License-Identifier: Apache-2.0
// stguard/json_escape.h: writing JSON strings the way the reference writer does.
#ifndef STGUARD_JSON_ESCAPE_H_
#define STGUARD_JSON_ESCAPE_H_

#include <string>
#include <string_view>

#include "stguard/export.h"

namespace stguard {

// AppendJsonString appends `utf8` to *out as a quoted JSON string, escaped exactly as
// serde_json (and so the reference safetensors writer) escapes: \" \\ \b \f \n \r \t,
// other U+0000..U+001F as \u00xx with lowercase hex, and everything else ('/', DEL,
// non-ASCII) raw. `utf8` must be valid UTF-8; this function does not check.
STGUARD_API void AppendJsonString(std::string_view utf8, std::string* out);

// AppendJsonText appends `text` as a JSON string that is always valid JSON, even for
// bytes that are not UTF-8 (paths on Linux are any bytes but NUL and '/'): well-formed
// UTF-8 is escaped as AppendJsonString does, and every byte that is not part of
// well-formed UTF-8 is written as the four characters \xNN (lowercase hex, so the JSON
// text holds "\\xff"), as the text output shows it. Used for paths, file names and error
// contexts; names and metadata from a validated header are UTF-8 already.
STGUARD_API void AppendJsonText(std::string_view text, std::string* out);

// FloatText is `value` as the shortest decimal that reads back as the same double (the
// same float when `single`, for an f32 value), always with a '.' or an exponent so that
// JSON readers in Python and JavaScript take it for that float: "-0.0", "1.0", "0.1",
// "1e+300". NaN and the infinities, which JSON numbers cannot hold, are "nan", "inf" and
// "-inf" (every NaN is "nan", whatever its sign or payload).
STGUARD_API std::string FloatText(double value, bool single);

// AppendJsonFloat appends FloatText(value, single) as a JSON value: a number, or for NaN
// and the infinities the strings "nan", "inf" and "-inf" (quoted).
STGUARD_API void AppendJsonFloat(double value, bool single, std::string* out);

}  // namespace stguard

#endif  // STGUARD_JSON_ESCAPE_H_
