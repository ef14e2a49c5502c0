// SPDX-License-Identifier: Apache-2.0
// Findings: the list a lint run appends to, with the per-rule cap (kMaxFindingsPerRule).
// Every finding of every rule passes through Add, so the cap holds everywhere.
#ifndef STGUARD_SRC_LINT_FINDINGS_H_
#define STGUARD_SRC_LINT_FINDINGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stguard/lint.h"
#include "stguard/shape.h"

namespace stguard::lint {

class Findings {
 public:
  explicit Findings(std::vector<LintFinding>* out) : out_(out) {}

  // Add appends `finding` unless its rule already has kMaxFindingsPerRule listed, in which
  // case it is only counted.
  void Add(LintFinding finding);
  // AddUnlisted counts `count` more findings of `rule` that the caller did not enumerate
  // (missing tensors beyond the cap). They appear in the final "N more" finding.
  void AddUnlisted(LintSeverity severity, std::string_view rule, uint64_t count);
  // Finish appends one "N more" finding per rule that went over the cap. Call it once.
  void Finish();

  // Error and Warning are shorthands for Add.
  void Error(std::string_view rule, std::string tensor, std::string expected, std::string found,
             std::string message, std::string file = {});
  void Warning(std::string_view rule, std::string tensor, std::string expected,
               std::string found, std::string message, std::string file = {});

 private:
  struct RuleCount {
    std::string rule;
    LintSeverity severity;
    uint64_t listed = 0;
    uint64_t unlisted = 0;  // saturates at UINT64_MAX
  };
  RuleCount& CountFor(std::string_view rule, LintSeverity severity);

  std::vector<LintFinding>* out_;
  std::vector<RuleCount> counts_;  // one per rule seen, in first-seen order (few rules)
};

// ShapeText renders a shape as "[4096, 1024]" ("[]" for a scalar).
std::string ShapeText(const uint64_t* dims, size_t rank);
std::string ShapeText(const Shape& shape);

}  // namespace stguard::lint

#endif  // STGUARD_SRC_LINT_FINDINGS_H_
