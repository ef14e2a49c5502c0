// SPDX-License-Identifier: Apache-2.0
// Remote inputs to requests, with huggingface_hub's conventions for hf:// names, the
// endpoint, the token and offline mode (stguard/remote.h, HUGGING FACE). Pure functions
// of the input and the environment; RemoteEnvironmentFromProcess alone reads the process.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "remote/range_response.h"
#include "remote/repo_path.h"
#include "stguard/remote.h"

namespace stguard {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string Trimmed(std::string text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const size_t last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// ReadToken reads a token file's first 4 KiB (a token is a few dozen bytes).
std::string ReadToken(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return "";
  std::string text(4096, '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(file.gcount()));
  return Trimmed(text);
}

bool IsTrue(std::string value) {
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return value == "1" || value == "true" || value == "yes" || value == "on";
}

Error BadName(std::string why) {
  return Error{ErrorCode::kInvalidArgument, 0, "not a usable hf:// name", std::move(why)};
}

// IsRepoPart says whether an org or repo name is one huggingface_hub accepts: letters,
// digits, '-', '_', '.', not "." or "..".
bool IsRepoPart(std::string_view part) {
  if (part.empty() || part == "." || part == ".." || part.size() > 96) return false;
  for (char c : part) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

// PercentDecoded decodes %XX (a revision may be written refs%2Fpr%2F1).
std::string PercentDecoded(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// SpecialRevisionLength returns the length of a revision holding '/' that
// huggingface_hub recognises at the start of `text` (refs/pr/N, refs/convert/NAME), or 0.
size_t SpecialRevisionLength(std::string_view text) {
  for (std::string_view prefix : {std::string_view("refs/pr/"), std::string_view("refs/convert/")}) {
    if (!text.starts_with(prefix)) continue;
    size_t end = prefix.size();
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                                 text[end] == '_')) {
      ++end;
    }
    if (end > prefix.size()) return end;
  }
  return 0;
}

struct HfName {
  std::string kind;  // "", "datasets/" or "spaces/"
  std::string repo;  // ORG/NAME
  std::string revision = "main";
  std::string path;  // "" for the whole repo
};

Result<HfName> ParseHfName(std::string_view rest) {
  HfName name;
  for (std::string_view kind : {std::string_view("datasets/"), std::string_view("spaces/")}) {
    if (rest.starts_with(kind)) {
      name.kind = std::string(kind);
      rest.remove_prefix(kind.size());
    }
  }
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return BadName("hf://ORG/NAME[@REV]/PATH expected");
  const std::string_view org = rest.substr(0, slash);
  rest.remove_prefix(slash + 1);
  const size_t end = rest.find_first_of("@/");
  const std::string_view repo = rest.substr(0, end);
  if (!IsRepoPart(org) || !IsRepoPart(repo)) return BadName("ORG and NAME are letters, digits, '-', '_', '.'");
  name.repo = std::string(org) + "/" + std::string(repo);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  if (rest.starts_with("@")) {
    rest.remove_prefix(1);
    size_t length = SpecialRevisionLength(rest);
    if (length == 0) length = std::min(rest.find('/'), rest.size());
    name.revision = PercentDecoded(rest.substr(0, length));
    if (name.revision.empty()) return BadName("an empty revision after '@'");
    rest.remove_prefix(length);
  }
  if (rest.starts_with("/")) rest.remove_prefix(1);
  name.path = std::string(rest);
  if (!name.path.empty() && !remote::IsRepoFilePath(name.path)) {
    return BadName("a path inside the repo has no empty, '.' or '..' part");
  }
  return name;
}

}  // namespace

RemoteEnvironment RemoteEnvironmentFromProcess() {
  RemoteEnvironment environment;
  if (std::string endpoint = Env("HF_ENDPOINT"); !endpoint.empty()) {
    while (endpoint.ends_with("/")) endpoint.pop_back();
    environment.endpoint = endpoint;
  }
  environment.offline = IsTrue(Env("HF_HUB_OFFLINE"));
  environment.token = Trimmed(Env("HF_TOKEN"));
  if (environment.token.empty()) {
    std::string path = Env("HF_TOKEN_PATH");
    if (path.empty()) {
      std::string home = Env("HF_HOME");
      if (home.empty() && !Env("HOME").empty()) home = Env("HOME") + "/.cache/huggingface";
      if (!home.empty()) path = home + "/token";
    }
    if (!path.empty()) environment.token = ReadToken(path);
  }
  return environment;
}

bool IsRemoteRepoInput(std::string_view input) {
  if (!input.starts_with("hf://")) return false;
  const Result<HfName> name = ParseHfName(input.substr(5));
  return name.ok() && name->path.empty();
}

Result<RemoteRepo> ResolveRemoteRepo(std::string_view input,
                                     const RemoteEnvironment& environment) {
  if (environment.offline) {
    return remote::RemoteError("HF_HUB_OFFLINE is set: remote inputs are not read");
  }
  if (!input.starts_with("hf://")) return BadName("hf://ORG/NAME[@REV] expected");
  Result<HfName> name = ParseHfName(input.substr(5));
  if (!name.ok()) return name.error();
  if (!name->path.empty()) return BadName("a file, not a whole repo");
  std::string endpoint = environment.endpoint;
  while (endpoint.ends_with("/")) endpoint.pop_back();
  const std::string api = name->kind.empty() ? "models/" : name->kind;
  const std::string revision = UrlQuote(name->revision, "");
  RemoteRepo repo;
  repo.api_prefix = endpoint + "/api/";
  repo.listing.url = repo.api_prefix + api + name->repo + "/tree/" + revision + "?recursive=true";
  repo.listing.token = environment.token;
  repo.listing.token_host = UrlHost(environment.endpoint);
  repo.file_prefix = endpoint + "/" + name->kind + name->repo + "/resolve/" + revision + "/";
  return repo;
}

Result<RemoteInput> ResolveRemoteInput(std::string_view input,
                                       const RemoteEnvironment& environment) {
  if (environment.offline) {
    return remote::RemoteError("HF_HUB_OFFLINE is set: remote inputs are not read");
  }
  RemoteInput resolved;
  resolved.request.token = environment.token;
  resolved.request.token_host = UrlHost(environment.endpoint);
  if (!input.starts_with("hf://")) {
    if (UrlHost(input).empty()) return BadName("not an http(s):// or hf:// URL");
    resolved.request.url = std::string(input);
    resolved.hub = UrlHost(input) == resolved.request.token_host;
    return resolved;
  }
  Result<HfName> name = ParseHfName(input.substr(5));
  if (!name.ok()) return name.error();
  if (name->path.empty()) {
    return BadName("hf://" + name->kind + name->repo +
                   " names a whole repo: give a file in it (hf://ORG/NAME/FILE)");
  }
  std::string endpoint = environment.endpoint;
  while (endpoint.ends_with("/")) endpoint.pop_back();
  resolved.request.url = endpoint + "/" + name->kind + name->repo + "/resolve/" +
                         UrlQuote(name->revision, "") + "/" + UrlQuote(name->path, "/");
  resolved.hub = true;
  return resolved;
}

}  // namespace stguard
