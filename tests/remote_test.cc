// SPDX-License-Identifier: Apache-2.0
// The remote-read policy (stguard/remote.h) against a recording fake server in each of
// the ways a server can misbehave: the budget, the consistency rules, servers that do not
// honour ranges, the skipped checks in the verdict; and the pure URL and hf:// rules.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "byte_source/torch_zip_builder.h"
#include "remote/range_response.h"
#include "stguard/remote.h"
#include "stguard/verdict.h"
#include "support/temp_dir.h"

namespace stguard {
namespace {

enum class Mode {
  kOk,               // 206 with exactly the range asked
  kIgnoresRange,     // 200 with the whole file
  kHonoursOnce,      // the first request 206, later ones 200
  kWholeIn206,       // 206 naming (and sending) the whole file
  kOnceThenWhole206, // the first request 206 as asked, later ones 206 with the whole file
  kWrongRange,       // 206 naming bytes one past those asked
  kTotalChanges,     // the total grows by one after the first request
  kShortHonest,      // headers right, the body cut short, the connection closed early
  kShortLyingLength, // Content-Length says the short length, Content-Range the full one
  kShortNoLength,    // Content-Range full, no Content-Length, the body short
  kNoContentRange,   // 206 without Content-Range
  kNotFound,         // 404
  kUnauthorized,     // 401
};

// FakeServer answers like an HTTP server in `mode` for a file of `size` bytes whose byte
// at i is bytes[i] (or 0 past bytes: a large file of zeros costs no memory), delivering
// bodies in 16 KiB chunks until the sink stops it; it records every request and byte sent.
class FakeServer final : public HttpTransport {
 public:
  FakeServer(std::string bytes, Mode mode, uint64_t size = 0)
      : bytes_(std::move(bytes)), mode_(mode), size_(size == 0 ? bytes_.size() : size) {}

  Error Fetch(const HttpRequest& request, HttpSink& sink) override {
    requests.push_back(request);
    HttpHead head;
    uint64_t begin = 0;
    uint64_t end = size_;
    const bool ranged = request.range.has_value() &&
                        !(mode_ == Mode::kIgnoresRange ||
                          (mode_ == Mode::kHonoursOnce && requests.size() > 1));
    if (mode_ == Mode::kNotFound || mode_ == Mode::kUnauthorized) {
      head.status = mode_ == Mode::kNotFound ? 404 : 401;
      sink.OnHead(head);
      return {};
    }
    uint64_t total = size_;
    if (mode_ == Mode::kTotalChanges && requests.size() > 1) ++total;
    if (ranged) {
      begin = request.range->begin;
      end = std::min(request.range->end, size_);
      if (mode_ == Mode::kWholeIn206 ||
          (mode_ == Mode::kOnceThenWhole206 && requests.size() > 1)) {
        begin = 0, end = size_;
      }
      if (mode_ == Mode::kWrongRange) ++begin, end = std::min(end + 1, size_);
      head.status = 206;
      if (mode_ != Mode::kNoContentRange) {
        head.content_range = "bytes " + std::to_string(begin) + "-" + std::to_string(end - 1) +
                             "/" + std::to_string(total);
      }
    } else {
      head.status = 200;
    }
    uint64_t send_end = end;
    const bool short_body = mode_ == Mode::kShortHonest || mode_ == Mode::kShortLyingLength ||
                            mode_ == Mode::kShortNoLength;
    if (short_body) send_end = begin + (end - begin) / 2;
    if (mode_ != Mode::kShortNoLength) {
      head.content_length = (mode_ == Mode::kShortLyingLength ? send_end : end) - begin;
    }
    if (!sink.OnHead(head)) return {};
    for (uint64_t at = begin; at < send_end;) {
      const uint64_t n = std::min<uint64_t>(16384, send_end - at);
      std::vector<std::byte> chunk(static_cast<size_t>(n));
      if (at < bytes_.size()) {
        const size_t copy = static_cast<size_t>(std::min<uint64_t>(n, bytes_.size() - at));
        std::memcpy(chunk.data(), bytes_.data() + at, copy);
      }
      sent += n;
      at += n;
      if (!sink.OnBody(chunk)) return {};
    }
    if (mode_ == Mode::kShortHonest) {
      return Error{ErrorCode::kIoError, 0, "remote read failed", "the connection closed early"};
    }
    return {};
  }

  std::vector<HttpRequest> requests;
  uint64_t sent = 0;

 private:
  std::string bytes_;
  Mode mode_;
  uint64_t size_;
};

RemoteInput InputFor(const std::string& url) {
  RemoteInput input;
  input.request.url = url;
  return input;
}

// Judge checks the server's file through the policy: the verdict, or the error opening it.
CheckResult Judge(FakeServer& server, RemoteLimits limits = {},
                  const RemoteInput& input = InputFor("http://127.0.0.1/model.bin")) {
  Result<std::unique_ptr<RemoteSource>> source = RemoteSource::Open(server, input, limits);
  if (!source.ok()) {
    CheckResult result;
    result.error = source.error();
    result.verdict = VerdictForError(source.error());
    return result;
  }
  CheckResult result = CheckSource(**source, input.request.url);
  EXPECT_EQ((*source)->bytes_received(), server.sent);
  return result;
}

CheckResult JudgeLocally(const std::string& bytes) {
  const MemorySource source(std::as_bytes(std::span(bytes.data(), bytes.size())));
  return CheckSource(source, "local");
}

bool Says(const CheckResult& result, const std::string& words) {
  return result.error.ToString().find(words) != std::string::npos;
}

std::string CorpusFile(const std::string& name) {
  const std::string path = std::string(STGUARD_CORPUS_DIR) + "/" + name;
  FILE* file = std::fopen(path.c_str(), "rb");
  EXPECT_NE(file, nullptr) << path;
  std::string bytes;
  if (file == nullptr) return bytes;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) bytes.append(buffer, n);
  std::fclose(file);
  return bytes;
}

// FlipFirstStorageByte flips the first data byte of the archive's data/0 record.
std::string FlipFirstStorageByte(std::string zip) {
  for (size_t at = zip.find("PK\x03\x04"); at != std::string::npos;
       at = zip.find("PK\x03\x04", at + 4)) {
    const size_t name_len = static_cast<uint8_t>(zip[at + 26]) | static_cast<uint8_t>(zip[at + 27]) << 8;
    const size_t extra_len = static_cast<uint8_t>(zip[at + 28]) | static_cast<uint8_t>(zip[at + 29]) << 8;
    if (zip.substr(at + 30, name_len).ends_with("/data/0")) {
      zip[at + 30 + name_len + extra_len] ^= 1;
      return zip;
    }
  }
  ADD_FAILURE() << "no data/0 record";
  return zip;
}

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(RemotePolicyTest, ASmallFileArrivesWholeAndEveryCheckRuns) {
  const std::string bytes = CorpusFile("torch/valid/dtypes.zip.pt");
  FakeServer server(bytes, Mode::kOk);
  const CheckResult result = Judge(server);
  EXPECT_TRUE(result.valid()) << result.error.ToString();
  EXPECT_TRUE(result.unchecked.empty());
  EXPECT_EQ(server.requests.size(), 1u);
  ASSERT_TRUE(server.requests[0].range.has_value());
  EXPECT_EQ(server.requests[0].range->begin, 0u);
  EXPECT_EQ(server.requests[0].range->end, RemoteLimits{}.block);
}

TEST(RemotePolicyTest, AFlippedStorageByteIsRefusedRemotelyAsLocally) {
  const std::string bytes = FlipFirstStorageByte(CorpusFile("torch/valid/dtypes.zip.pt"));
  const CheckResult local = JudgeLocally(bytes);
  ASSERT_EQ(local.error.code, ErrorCode::kZipChecksum) << local.error.ToString();
  FakeServer server(bytes, Mode::kOk);
  const CheckResult remote = Judge(server);
  EXPECT_EQ(remote.verdict, local.verdict);
  EXPECT_EQ(remote.error.code, ErrorCode::kZipChecksum);
}

TEST(RemotePolicyTest, ALargeFileListsTheChecksItSkipped) {
  const testing::TorchZipPieces zip = testing::BuildTorchZip(uint32_t{1} << 20);  // 4 MiB
  FakeServer server(zip.Bytes(), Mode::kOk);
  const CheckResult result = Judge(server);
  ASSERT_TRUE(result.valid()) << result.error.ToString();
  EXPECT_EQ(result.unchecked, std::vector<std::string>{"1 storage checksum"});
  EXPECT_NE(EnvelopeJson(result).find("\"unchecked\":[\"1 storage checksum\"]"),
            std::string::npos);
  // The first block, the tail and the directory: far below the file's 4 MiB.
  EXPECT_LT(server.sent, 4 * RemoteLimits{}.block);
  // Locally the same file has nothing unchecked.
  EXPECT_TRUE(JudgeLocally(zip.Bytes()).unchecked.empty());
}

TEST(RemotePolicyTest, AServerIgnoringRangeIsReadWholeWithinTheBudget) {
  const testing::TorchZipPieces zip = testing::BuildTorchZip(uint32_t{1} << 20);
  FakeServer server(zip.Bytes(), Mode::kIgnoresRange);
  const CheckResult result = Judge(server);
  ASSERT_TRUE(result.valid()) << result.error.ToString();
  EXPECT_TRUE(result.unchecked.empty());  // every byte arrived: every check ran
  EXPECT_EQ(server.requests.size(), 1u);
}

TEST(RemotePolicyTest, AServerIgnoringRangePastTheBudgetIsAnError) {
  const testing::TorchZipPieces zip = testing::BuildTorchZip(uint32_t{1} << 20);
  FakeServer server(zip.Bytes(), Mode::kIgnoresRange);
  const CheckResult result = Judge(server, RemoteLimits{64 << 10, kMiB});
  EXPECT_EQ(result.verdict, Verdict::kError);
  EXPECT_TRUE(Says(result, "the server does not honour range requests")) << result.error.ToString();
  EXPECT_EQ(server.requests.size(), 1u);  // no request after it
  EXPECT_LE(server.sent, (64 << 10) + 16384);
}

TEST(RemotePolicyTest, ASmallFileFromAServerIgnoringRangeIsJudged) {
  const std::string bytes = CorpusFile("torch/valid/dtypes.zip.pt");
  FakeServer server(bytes, Mode::kIgnoresRange);
  EXPECT_TRUE(Judge(server).valid());
}

TEST(RemotePolicyTest, TwoGibibytesOfWholeBodiesCostTheBlockOnly) {
  // The page's fault: a server that honours the first range and then sends whole bodies.
  // A ZIP's first records, then zeros to 2 GiB: the sniff asks for the tail.
  const std::string head = CorpusFile("torch/valid/dtypes.zip.pt");
  for (Mode mode : {Mode::kHonoursOnce, Mode::kIgnoresRange, Mode::kWholeIn206,
                    Mode::kOnceThenWhole206}) {
    FakeServer server(head, mode, uint64_t{2} << 30);
    const CheckResult result = Judge(server);
    EXPECT_EQ(result.verdict, Verdict::kError);
    EXPECT_TRUE(Says(result, "does not honour range requests")) << result.error.ToString();
    EXPECT_LE(server.sent, 2 * RemoteLimits{}.block + 16384);
  }
}

TEST(RemotePolicyTest, A206WithTheWholeBodyIsReadOnlyWhenItFitsTheBudget) {
  const testing::TorchZipPieces zip = testing::BuildTorchZip(uint32_t{1} << 20);
  FakeServer fits(zip.Bytes(), Mode::kWholeIn206);
  const CheckResult whole = Judge(fits);
  EXPECT_TRUE(whole.valid()) << whole.error.ToString();
  EXPECT_TRUE(whole.unchecked.empty());
  FakeServer over(zip.Bytes(), Mode::kWholeIn206);
  const CheckResult cut = Judge(over, RemoteLimits{64 << 10, kMiB});
  EXPECT_EQ(cut.verdict, Verdict::kError);
  EXPECT_TRUE(Says(cut, "does not honour range requests")) << cut.error.ToString();
  EXPECT_LE(over.sent, (64 << 10) + 16384);
}

TEST(RemotePolicyTest, InconsistentResponsesAreErrorsNamingWhatWasWrong) {
  const testing::TorchZipPieces zip = testing::BuildTorchZip(uint32_t{1} << 20);
  const struct {
    Mode mode;
    const char* words;
  } cases[] = {
      {Mode::kWrongRange, "Content-Range names other bytes"},
      {Mode::kTotalChanges, "size changed between requests"},
      {Mode::kShortHonest, "closed early"},
      {Mode::kShortLyingLength, "Content-Length (32768) differs from its Content-Range"},
      {Mode::kShortNoLength, "the body ended after 32768 of the 65536 bytes"},
      {Mode::kNoContentRange, "206 response without Content-Range"},
      {Mode::kNotFound, "HTTP 404"},
      {Mode::kUnauthorized, "HTTP 401"},
  };
  for (const auto& c : cases) {
    FakeServer server(zip.Bytes(), c.mode);
    const CheckResult result = Judge(server);
    EXPECT_EQ(result.verdict, Verdict::kError) << c.words;
    EXPECT_EQ(result.error.code, ErrorCode::kIoError) << c.words;
    EXPECT_TRUE(Says(result, c.words)) << c.words << " / " << result.error.ToString();
  }
}

TEST(RemotePolicyTest, TheBudgetBoundsWhatTheChecksMayRead) {
  // A safetensors header of 300 KB: within the default budget, past a 128 KiB one.
  std::string header = "{\"__metadata__\":{\"k\":\"" + std::string(300000, 'x') + "\"}}";
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  file += header;
  FakeServer roomy(file, Mode::kOk);
  EXPECT_TRUE(Judge(roomy).valid());
  FakeServer tight(file, Mode::kOk);
  const CheckResult result = Judge(tight, RemoteLimits{64 << 10, 128 << 10});
  EXPECT_EQ(result.verdict, Verdict::kError);
  EXPECT_TRUE(Says(result, "more than the remote budget")) << result.error.ToString();
  EXPECT_LE(tight.sent, uint64_t{128} << 10);
}

TEST(RemotePolicyTest, AGatedRepoWithoutATokenSaysSetHfToken) {
  FakeServer server("", Mode::kUnauthorized);
  RemoteInput input = InputFor("https://huggingface.co/org/gated/resolve/main/model.bin");
  input.hub = true;
  const CheckResult result = Judge(server, {}, input);
  EXPECT_TRUE(Says(result, "HTTP 401")) << result.error.ToString();
  EXPECT_TRUE(Says(result, "set HF_TOKEN")) << result.error.ToString();
  input.hub = false;  // another host: no hint
  FakeServer other("", Mode::kUnauthorized);
  EXPECT_FALSE(Says(Judge(other, {}, input), "HF_TOKEN"));
}

TEST(RemotePolicyTest, AnEmptyFileIsJudgedFromA416) {
  class Empty final : public HttpTransport {
   public:
    Error Fetch(const HttpRequest&, HttpSink& sink) override {
      HttpHead head;
      head.status = 416;
      head.content_range = "bytes */0";
      sink.OnHead(head);
      return {};
    }
  } server;
  Result<std::unique_ptr<RemoteSource>> source =
      RemoteSource::Open(server, InputFor("http://127.0.0.1/empty"));
  ASSERT_TRUE(source.ok()) << source.error().ToString();
  EXPECT_EQ((*source)->size(), 0u);
  EXPECT_FALSE((*source)->remote());
}

TEST(RemotePolicyTest, WithoutATransportAUrlIsBuiltWithoutUrlSupport) {
  SetHttpTransport(nullptr);
  const CheckResult result = CheckPath("https://127.0.0.1/model.safetensors");
  EXPECT_EQ(result.verdict, Verdict::kError);
  EXPECT_TRUE(Says(result, "built without URL support")) << result.error.ToString();
}

TEST(RemotePolicyTest, CheckPathReadsAUrlThroughTheInstalledTransport) {
  const std::string bytes = CorpusFile("sample.safetensors");
  auto server = std::make_shared<FakeServer>(bytes, Mode::kOk);
  SetHttpTransport(server);
  const CheckResult result = CheckPath("http://127.0.0.1/sample.safetensors");
  SetHttpTransport(nullptr);
  EXPECT_TRUE(result.valid()) << result.error.ToString();
  EXPECT_EQ(result.summary.tensors, JudgeLocally(bytes).summary.tensors);
  ASSERT_EQ(server->requests.size(), 1u);
  EXPECT_EQ(server->requests[0].url, "http://127.0.0.1/sample.safetensors");
}

TEST(ContentRangeTest, ParsesOnlyWellFormedRanges) {
  const auto range = remote::ParseContentRange("bytes 0-9/100");
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->first, 0u);
  EXPECT_EQ(range->last, 9u);
  EXPECT_EQ(range->total, 100u);
  EXPECT_FALSE(remote::ParseContentRange("bytes 0-9/*")->total.has_value());
  for (const char* bad : {"bytes 9-0/100", "bytes 0-100/100", "0-9/100", "bytes -9/100",
                          "bytes 0-9", "bytes 0-9/1x0", "bytes 0-9/9"}) {
    EXPECT_FALSE(remote::ParseContentRange(bad).has_value()) << bad;
  }
}

TEST(RedirectTest, FollowsAtMostTenAndNeverDowngrades) {
  EXPECT_EQ(*NextRedirect("http://a/x/y", "https://b/z", 1), "https://b/z");
  EXPECT_EQ(*NextRedirect("https://a:8080/x/y?q", "/z", 1), "https://a:8080/z");
  EXPECT_EQ(*NextRedirect("https://a/x/y", "z?k=1", 1), "https://a/x/z?k=1");
  EXPECT_EQ(*NextRedirect("https://a", "z", 1), "https://a/z");
  EXPECT_EQ(*NextRedirect("https://a/x", "//cdn/y", 1), "https://cdn/y");
  EXPECT_TRUE(NextRedirect("http://a/", "http://b/", kMaxRedirects).ok());
  EXPECT_FALSE(NextRedirect("http://a/", "http://b/", kMaxRedirects + 1).ok());
  EXPECT_FALSE(NextRedirect("https://a/", "http://b/", 1).ok());
  EXPECT_FALSE(NextRedirect("https://a/", "file:///etc/passwd", 1).ok());
  EXPECT_FALSE(NextRedirect("http://a/", "ftp://b/", 1).ok());
}

TEST(UrlTest, HostQuoteAndRemoteInputs) {
  EXPECT_EQ(UrlHost("https://User:pw@HF.co:8443/x?y"), "hf.co:8443");
  EXPECT_EQ(UrlHost("http://127.0.0.1/a"), "127.0.0.1");
  EXPECT_EQ(UrlHost("hf://org/name"), "");
  EXPECT_EQ(UrlQuote("refs/pr/1", ""), "refs%2Fpr%2F1");
  EXPECT_EQ(UrlQuote("a b/c~d.e", "/"), "a%20b/c~d.e");
  EXPECT_TRUE(IsRemoteInput("HTTPS://x/y"));
  EXPECT_TRUE(IsRemoteInput("hf://org/name/file"));
  EXPECT_FALSE(IsRemoteInput("model.safetensors"));
  EXPECT_FALSE(IsRemoteInput("ftp://x/y"));
}

TEST(HfInputTest, NamesMapToResolveUrlsAsHuggingfaceHubDoes) {
  RemoteEnvironment env;
  env.endpoint = "http://127.0.0.1:9000";
  env.token = "secret";
  const struct {
    const char* input;
    const char* url;
  } cases[] = {
      {"hf://org/name/model.safetensors",
       "http://127.0.0.1:9000/org/name/resolve/main/model.safetensors"},
      {"hf://org/name@v1.0/sub dir/model.bin",
       "http://127.0.0.1:9000/org/name/resolve/v1.0/sub%20dir/model.bin"},
      {"hf://org/name@refs/pr/1/model.bin",
       "http://127.0.0.1:9000/org/name/resolve/refs%2Fpr%2F1/model.bin"},
      {"hf://org/name@refs%2Fpr%2F2/model.bin",
       "http://127.0.0.1:9000/org/name/resolve/refs%2Fpr%2F2/model.bin"},
      {"hf://datasets/org/name/data.npz",
       "http://127.0.0.1:9000/datasets/org/name/resolve/main/data.npz"},
  };
  for (const auto& c : cases) {
    const Result<RemoteInput> input = ResolveRemoteInput(c.input, env);
    ASSERT_TRUE(input.ok()) << c.input << ": " << input.error().ToString();
    EXPECT_EQ(input->request.url, c.url);
    EXPECT_TRUE(input->hub);
    EXPECT_EQ(input->request.token, "secret");
    EXPECT_EQ(input->request.token_host, "127.0.0.1:9000");
  }
  for (const char* bad : {"hf://org", "hf://org/name", "hf://org/name@v1", "hf://o rg/name/f",
                          "hf://org/name/../x", "hf://org/name//x", "hf://org/../f",
                          "hf://org/name@/f"}) {
    const Result<RemoteInput> input = ResolveRemoteInput(bad, env);
    ASSERT_FALSE(input.ok()) << bad;
    EXPECT_EQ(input.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  // A plain URL on another host is no hub URL (the token host stays the endpoint's).
  const Result<RemoteInput> other = ResolveRemoteInput("https://example.org/m.bin", env);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->hub);
  EXPECT_EQ(other->request.token_host, "127.0.0.1:9000");
  env.offline = true;
  const Result<RemoteInput> offline = ResolveRemoteInput("hf://org/name/f", env);
  ASSERT_FALSE(offline.ok());
  EXPECT_NE(offline.error().ToString().find("HF_HUB_OFFLINE"), std::string::npos);
}

TEST(HfInputTest, TheEnvironmentFollowsHuggingfaceHub) {
  testing::TempDir dir;
  const std::string token_file = dir.File("token");
  FILE* file = std::fopen(token_file.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs("  from-file\n", file);
  std::fclose(file);
  ::setenv("HF_ENDPOINT", "http://127.0.0.1:1/", 1);
  ::setenv("HF_TOKEN", "from-env", 1);
  ::setenv("HF_TOKEN_PATH", token_file.c_str(), 1);
  ::setenv("HF_HUB_OFFLINE", "0", 1);
  RemoteEnvironment env = RemoteEnvironmentFromProcess();
  EXPECT_EQ(env.endpoint, "http://127.0.0.1:1");
  EXPECT_EQ(env.token, "from-env");
  EXPECT_FALSE(env.offline);
  ::unsetenv("HF_TOKEN");
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  env = RemoteEnvironmentFromProcess();
  EXPECT_EQ(env.token, "from-file");
  EXPECT_TRUE(env.offline);
  ::unsetenv("HF_TOKEN_PATH");
  ::setenv("HF_HOME", dir.path().c_str(), 1);
  EXPECT_EQ(RemoteEnvironmentFromProcess().token, "from-file");
  ::setenv("HF_HOME", dir.File("none").c_str(), 1);
  EXPECT_EQ(RemoteEnvironmentFromProcess().token, "");
  for (const char* name : {"HF_ENDPOINT", "HF_HUB_OFFLINE", "HF_HOME"}) ::unsetenv(name);
  EXPECT_EQ(RemoteEnvironmentFromProcess().endpoint, "https://huggingface.co");
}

// PagedListing serves a repo listing of `pages` pages, each `page_body`, each but the last
// with a Link to the next (on `next_host`).
class PagedListing final : public HttpTransport {
 public:
  PagedListing(std::vector<std::string> pages, std::string next_prefix)
      : pages_(std::move(pages)), next_prefix_(std::move(next_prefix)) {}
  Error Fetch(const HttpRequest& request, HttpSink& sink) override {
    requests.push_back(request);
    const size_t page = requests.size() - 1;
    HttpHead head;
    head.status = 200;
    if (page + 1 < pages_.size()) {
      head.link = "<" + next_prefix_ + std::to_string(page + 1) + ">; rel=\"next\", <x>; rel=\"prev\"";
    }
    if (!sink.OnHead(head)) return {};
    const std::string& body = pages_[std::min(page, pages_.size() - 1)];
    sink.OnBody(std::as_bytes(std::span(body.data(), body.size())));
    return {};
  }
  std::vector<HttpRequest> requests;

 private:
  std::vector<std::string> pages_;
  std::string next_prefix_;
};

RemoteRepo TestRepo() {
  RemoteEnvironment env;
  env.endpoint = "http://127.0.0.1:9000";
  env.token = "t";
  Result<RemoteRepo> repo = ResolveRemoteRepo("hf://org/name@refs/pr/1", env);
  EXPECT_TRUE(repo.ok());
  return *repo;
}

TEST(RepoListingTest, WholeReposResolveToTheTreeApi) {
  RemoteEnvironment env;
  env.endpoint = "http://127.0.0.1:9000/";
  EXPECT_TRUE(IsRemoteRepoInput("hf://org/name"));
  EXPECT_TRUE(IsRemoteRepoInput("hf://datasets/org/name@v1"));
  EXPECT_FALSE(IsRemoteRepoInput("hf://org/name/file.bin"));
  EXPECT_FALSE(IsRemoteRepoInput("https://example.org/org/name"));
  const RemoteRepo repo = TestRepo();
  EXPECT_EQ(repo.listing.url,
            "http://127.0.0.1:9000/api/models/org/name/tree/refs%2Fpr%2F1?recursive=true");
  EXPECT_EQ(repo.file_prefix, "http://127.0.0.1:9000/org/name/resolve/refs%2Fpr%2F1/");
  EXPECT_EQ(repo.listing.token_host, "127.0.0.1:9000");
  const Result<RemoteRepo> dataset = ResolveRemoteRepo("hf://datasets/org/d", env);
  ASSERT_TRUE(dataset.ok());
  EXPECT_EQ(dataset->listing.url, "http://127.0.0.1:9000/api/datasets/org/d/tree/main?recursive=true");
  EXPECT_EQ(dataset->file_prefix, "http://127.0.0.1:9000/datasets/org/d/resolve/main/");
  EXPECT_FALSE(ResolveRemoteRepo("hf://org/name/f.bin", env).ok());
  env.offline = true;
  EXPECT_FALSE(ResolveRemoteRepo("hf://org/name", env).ok());
}

TEST(RepoListingTest, PagesParseStrictlyAndPathsAreChecked) {
  std::vector<RepoFile> files;
  ASSERT_TRUE(ParseRepoListingPage(
      R"([{"type":"file","path":"a/b.bin","size":12,"lfs":{"size":12,"x":[1,{}]}},)"
      R"({"type":"directory","path":"a","size":0}])", 1, &files).ok());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].path, "a/b.bin");
  EXPECT_EQ(files[0].size, 12u);
  for (const char* bad : {R"([{"type":"file","path":"../x","size":1}])",
                          R"([{"type":"file","path":"/x","size":1}])",
                          R"([{"type":"file","path":"a//x","size":1}])",
                          R"([{"type":"file","path":"a\\x","size":1}])",
                          R"([{"type":"file","path":"a\u0001","size":1}])",
                          R"([{"type":"file","path":"x","size":-1}])",
                          R"([{"type":"file","path":"x","size":1.5}])",
                          R"([{"type":"file","path":"x"}])",
                          R"([{"type":"link","path":"x","size":1}])",
                          R"({"type":"file"})", R"([1])", R"([{"type":"file",)", "[] x"}) {
    std::vector<RepoFile> none;
    const Error error = ParseRepoListingPage(bad, 2, &none);
    EXPECT_EQ(error.code, ErrorCode::kIoError) << bad;
    EXPECT_NE(error.ToString().find("page 2"), std::string::npos) << error.ToString();
  }
  EXPECT_EQ(NextPageUrl(R"(<http://h/a?c=1>; rel="prev", <http://h/b?c=2>; rel="next")"),
            "http://h/b?c=2");
  EXPECT_EQ(NextPageUrl(R"(<http://h/a>; rel="prev")"), "");
  EXPECT_EQ(NextPageUrl(""), "");
}

TEST(RepoListingTest, LinkPagesAreFollowedWithinTheBudgets) {
  const RemoteRepo repo = TestRepo();
  const std::string next = "http://127.0.0.1:9000/api/models/org/name/tree/main?cursor=";
  auto page = [](int k) {
    return "[{\"type\":\"file\",\"path\":\"f" + std::to_string(k) + "\",\"size\":1}]";
  };
  PagedListing three({page(2), page(0), page(1)}, next);
  const Result<std::vector<RepoFile>> files = ListRemoteRepo(three, repo);
  ASSERT_TRUE(files.ok()) << files.error().ToString();
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].path, "f0");  // sorted by path
  ASSERT_EQ(three.requests.size(), 3u);
  EXPECT_EQ(three.requests[2].url, next + "2");
  EXPECT_EQ(three.requests[2].token, "t");

  RepoListingLimits limits;
  limits.max_pages = 2;
  PagedListing too_many({page(0), page(1), page(2)}, next);
  Result<std::vector<RepoFile>> over = ListRemoteRepo(too_many, repo, limits);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().ToString().find("more than 2 listing pages"), std::string::npos);
  EXPECT_EQ(too_many.requests.size(), 2u);

  limits = {};
  limits.max_entries = 2;
  PagedListing many({page(0), page(1), page(2)}, next);
  over = ListRemoteRepo(many, repo, limits);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, ErrorCode::kFolderTooLarge);

  limits = {};
  limits.max_page_bytes = 10;
  PagedListing large({page(0)}, next);
  over = ListRemoteRepo(large, repo, limits);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().ToString().find("larger than 10 bytes"), std::string::npos);

  PagedListing twice({page(0), page(0)}, next);
  over = ListRemoteRepo(twice, repo);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().ToString().find("listed twice"), std::string::npos);

  for (const char* elsewhere : {"http://localhost:9000/api/models/org/name/tree/main?c=",
                                "https://127.0.0.1:9000/api/models/x?c=",
                                "http://127.0.0.1:9000/org/name/resolve/main/x?c="}) {
    PagedListing away({page(0), page(1)}, elsewhere);
    over = ListRemoteRepo(away, repo);
    ASSERT_FALSE(over.ok()) << elsewhere;
    EXPECT_NE(over.error().ToString().find("not on the endpoint"), std::string::npos);
    EXPECT_EQ(away.requests.size(), 1u);
  }
}

TEST(RepoListingTest, AGatedListingWithoutATokenSaysSetHfToken) {
  FakeServer gated("", Mode::kUnauthorized, 1);
  RemoteRepo repo = TestRepo();
  repo.listing.token.clear();
  const Result<std::vector<RepoFile>> files = ListRemoteRepo(gated, repo);
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.error().ToString().find("HTTP 401"), std::string::npos);
  EXPECT_NE(files.error().ToString().find("set HF_TOKEN"), std::string::npos);
}

// WholeBody answers one GET with `status`, an optional Content-Length and `body`.
class WholeBody final : public HttpTransport {
 public:
  WholeBody(int status, std::optional<uint64_t> length, std::string body)
      : status_(status), length_(length), body_(std::move(body)) {}
  Error Fetch(const HttpRequest& request, HttpSink& sink) override {
    had_range = request.range.has_value();
    HttpHead head;
    head.status = status_;
    head.content_length = length_;
    if (!sink.OnHead(head)) return {};
    sink.OnBody(std::as_bytes(std::span(body_.data(), body_.size())));
    return {};
  }
  bool had_range = false;

 private:
  int status_;
  std::optional<uint64_t> length_;
  std::string body_;
};

TEST(DownloadTest, AWholeFileIsWrittenWithinTheCapAndItsContentLength) {
  testing::TempDir dir;
  RemoteInput input;
  input.request.url = "http://127.0.0.1:9/f.bin";
  auto download = [&](WholeBody& server, uint64_t cap, std::string* got) {
    const std::string path = dir.File("out");
    FILE* file = std::fopen(path.c_str(), "w+b");
    const Error error = DownloadRemote(server, input, fileno(file), cap);
    std::fseek(file, 0, SEEK_SET);
    got->assign(64, '\0');
    got->resize(std::fread(got->data(), 1, got->size(), file));
    std::fclose(file);
    return error;
  };
  std::string got;
  WholeBody ok(200, 5, "hello");
  ASSERT_TRUE(download(ok, 5, &got).ok());
  EXPECT_EQ(got, "hello");
  EXPECT_FALSE(ok.had_range);
  WholeBody unannounced(200, std::nullopt, "hello");
  EXPECT_TRUE(download(unannounced, 5, &got).ok());
  struct Case {
    int status;
    std::optional<uint64_t> length;
    const char* body;
    uint64_t cap;
    const char* words;
  };
  for (const Case& bad : {Case{200, 6, "hello!", 5, "over the download cap of 5"},
                          Case{200, std::nullopt, "hello!", 5, "passes the download cap"},
                          Case{200, 3, "hello", 5, "longer than its Content-Length"},
                          Case{200, 9, "hello", 50, "ended after 5 of the 9 bytes"},
                          Case{206, 5, "hello", 50, "HTTP 206"},
                          Case{404, 5, "hello", 50, "HTTP 404"}}) {
    WholeBody server(bad.status, bad.length, bad.body);
    const Error error = download(server, bad.cap, &got);
    EXPECT_EQ(error.code, ErrorCode::kIoError) << bad.words;
    EXPECT_NE(error.ToString().find(bad.words), std::string::npos) << error.ToString();
  }
}

}  // namespace
}  // namespace stguard
