// SPDX-License-Identifier: Apache-2.0
// Findings: the per-rule cap and the "N more" summaries (see findings.h).
#include "lint/findings.h"

#include <cstdint>
#include <limits>

namespace stguard::lint {

Findings::RuleCount& Findings::CountFor(std::string_view rule, LintSeverity severity) {
  for (RuleCount& count : counts_) {
    if (count.rule == rule) return count;
  }
  counts_.push_back(RuleCount{std::string(rule), severity});
  return counts_.back();
}

void Findings::Add(LintFinding finding) {
  RuleCount& count = CountFor(finding.rule, finding.severity);
  if (count.listed < kMaxFindingsPerRule) {
    ++count.listed;
    out_->push_back(std::move(finding));
  } else if (count.unlisted != std::numeric_limits<uint64_t>::max()) {
    ++count.unlisted;
  }
}

void Findings::AddUnlisted(LintSeverity severity, std::string_view rule, uint64_t num) {
  RuleCount& count = CountFor(rule, severity);
  count.unlisted = num > std::numeric_limits<uint64_t>::max() - count.unlisted
                       ? std::numeric_limits<uint64_t>::max()
                       : count.unlisted + num;
}

void Findings::Finish() {
  for (const RuleCount& count : counts_) {
    if (count.unlisted == 0) continue;
    LintFinding more;
    more.severity = count.severity;
    more.rule = count.rule;
    more.found = std::to_string(count.unlisted) + " more";
    more.message = std::to_string(count.unlisted) + " more " + count.rule +
                   " findings are not listed (at most " + std::to_string(kMaxFindingsPerRule) +
                   " per rule)";
    out_->push_back(std::move(more));
  }
}

void Findings::Error(std::string_view rule, std::string tensor, std::string expected,
                     std::string found, std::string message, std::string file) {
  Add(LintFinding{LintSeverity::kError, std::string(rule), std::move(file), std::move(tensor),
                  std::move(expected), std::move(found), false, std::move(message)});
}

void Findings::Warning(std::string_view rule, std::string tensor, std::string expected,
                       std::string found, std::string message, std::string file) {
  Add(LintFinding{LintSeverity::kWarning, std::string(rule), std::move(file),
                  std::move(tensor), std::move(expected), std::move(found), false,
                  std::move(message)});
}

std::string ShapeText(const Shape& shape) {
  std::string out = "[";
  bool first = true;
  for (uint64_t dim : shape) {
    if (!first) out += ", ";
    first = false;
    out += std::to_string(dim);
  }
  return out + "]";
}

std::string ShapeText(const uint64_t* dims, size_t rank) {
  std::string out = "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

}  // namespace stguard::lint
