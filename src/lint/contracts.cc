// SPDX-License-Identifier: Apache-2.0
// CheckContracts: the format page's file-level contracts.
// - __metadata__.format: course files (config.json with tl_arch or tl_tokenizer, or the
//   bigram family) must say "tinyllm" (an error otherwise). Other files should name a
//   format ("pt" from transformers): its absence is a warning, since transformers then has
//   to guess the framework.
// - A model folder holds tokenizer.json only when config.json says "tl_tokenizer": "file".
//   Checked for course configs only: Hugging Face folders always ship tokenizer.json.
#include "lint/engine.h"

namespace stguard::lint {

void CheckContracts(std::span<const ShardRef> shards, const ModelSpec& spec,
                    TokenizerFile tokenizer, Findings* findings) {
  const bool course =
      spec.course || (spec.family != nullptr && spec.family->name == "bigram");
  for (const ShardRef& shard : shards) {
    const std::optional<std::string_view> format = shard.checkpoint->FindMetadata("format");
    const std::string found = !format ? "absent" : PrintableText(format->substr(0, 64));
    if (course && (!format || *format != "tinyllm")) {
      findings->Error("format-metadata", {}, "tinyllm", found,
                      "course files carry __metadata__ {\"format\": \"tinyllm\"}",
                      std::string(shard.name));
    } else if (!course && !format) {
      findings->Warning("format-metadata", {}, "a format such as \"pt\"", found,
                        "no __metadata__.format: loaders must guess which framework wrote it",
                        std::string(shard.name));
    }
  }
  if (tokenizer == TokenizerFile::kUnknown || !spec.course) return;
  const bool says_file = spec.tl_tokenizer && *spec.tl_tokenizer == "file";
  if (says_file && tokenizer == TokenizerFile::kAbsent) {
    findings->Warning("tl-tokenizer", "tokenizer.json", "present", "absent",
                      "config.json says \"tl_tokenizer\": \"file\", but the folder has no "
                      "tokenizer.json",
                      "tokenizer.json");
  } else if (!says_file && tokenizer == TokenizerFile::kPresent) {
    findings->Warning("tl-tokenizer", "tokenizer.json", "absent", "present",
                      "the folder holds tokenizer.json, but config.json does not say "
                      "\"tl_tokenizer\": \"file\"",
                      "tokenizer.json");
  }
}

}  // namespace stguard::lint
