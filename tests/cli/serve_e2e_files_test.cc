// A job's outputs fetched end to end (e2e_fixture.h): a job run by `tuneplane-slurmsim`
// writes weights, a folder, a symbolic link to /etc/passwd and one out of output/; then
// `tuneplane cp` against the real `serve` returns the weights byte for byte (whole, from a
// kept partial file, and as a folder with -r), the job's checkpoints/ beside them, and
// refuses the links and a traversal with exit 2 — never writing what they point at.
#include <httplib.h>

#include <filesystem>
#include <sstream>

#include "client_cli/copy_paths.h"
#include "e2e_fixture.h"

namespace tuneplane::cli::testing {
namespace {

namespace fs = std::filesystem;
using pipeline::testing::readFile;
using pipeline::testing::writeFile;

// Writes 3 MB of random weights (more than a few of the server's 64 KiB chunks), a nested
// file, a link to /etc/passwd and a link to the attempt dir.
constexpr const char* kWriteOutputs =
    "set -e; out=\"$TUNEPLANE_OUTPUT_DIR\"; mkdir -p \"$out/model/sub\"; "
    "head -c 3000000 /dev/urandom > \"$out/model/weights.bin\"; "
    "echo '{\"lr\": 0.001}' > \"$out/model/sub/config.json\"; "
    "ln -s /etc/passwd \"$out/passwd\"; ln -s .. \"$out/up\"; echo done";

class ServeE2eFilesTest : public ServeE2eTest {
 protected:
  void SetUp() override {
    ServeE2eTest::SetUp();
    id_ = submit(cpuSpec(kWriteOutputs));
    ASSERT_FALSE(id_.empty());
    const json job = waitPhase(id_, "Succeeded");
    output_ = job["attempts"][0].value("staging_dir", "") + "/output";
    local_ = scratch_ + "/local";
    fs::create_directories(local_);
  }

  std::string id_;
  std::string output_;
  std::string local_;
};

TEST_F(ServeE2eFilesTest, CpReturnsTheWeightsByteForByteWholeResumedAndAsAFolder) {
  const std::string weights = readFile(output_ + "/model/weights.bin");
  ASSERT_EQ(weights.size(), 3'000'000u);

  auto r = alice_->run({"cp", id_ + "/model/weights.bin", local_ + "/w.bin"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(readFile(local_ + "/w.bin") == weights) << "not the job's bytes";
  // Into a folder, naming the attempt.
  r = alice_->run({"cp", id_ + ":1/model/weights.bin", local_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(readFile(local_ + "/weights.bin") == weights);

  // A partial file kept from an interrupted copy, with the version the server gave it: the
  // same command asks for the rest only (206), and the result is whole.
  httplib::Client http(serve_->url());
  auto probe =
      http.Get("/v1/jobs/" + id_ + "/files/content?path=model/weights.bin",
               {{"Authorization", std::string("Bearer ") + kAliceToken}, {"Range", "bytes=0-0"}});
  ASSERT_TRUE(probe && probe->status == 206);
  const std::string target = local_ + "/resumed.bin";
  writeFile(partialPath(target), weights.substr(0, 1'234'567));
  writeFile(partialPath(target) + ".etag", probe->get_header_value("ETag"));
  r = alice_->run({"cp", id_ + "/model/weights.bin", target});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(readFile(target) == weights);
  EXPECT_FALSE(fs::exists(partialPath(target)));
  bool ranged = false;
  std::istringstream access(readFile(site_->dir() + "/serve.out"));
  for (std::string line; std::getline(access, line);) {
    const json entry = json::parse(line, nullptr, false);
    if (entry.is_object() && entry.value("route", "") == "/v1/jobs/{id}/files/content" &&
        entry.value("status", 0) == 206 && entry.value("bytes", 0) == 3'000'000 - 1'234'567) {
      ranged = true;
    }
  }
  EXPECT_TRUE(ranged) << "no 206 answer of the rest in serve's access log";

  // A folder with -r: every file, the same bytes.
  r = alice_->run({"cp", "-r", id_ + "/model", local_ + "/model-copy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(readFile(local_ + "/model-copy/weights.bin") == weights);
  EXPECT_EQ(readFile(local_ + "/model-copy/sub/config.json"), "{\"lr\": 0.001}\n");
}

TEST_F(ServeE2eFilesTest, LinksAndATraversalAreRefusedAndNothingTheyPointAtIsWritten) {
  const std::string passwd = readFile("/etc/passwd");
  auto link = alice_->run({"cp", id_ + "/passwd", local_ + "/passwd"});
  EXPECT_EQ(link.exit_code, 2) << link.err;
  EXPECT_NE(link.err.find("symbolic link"), std::string::npos) << link.err;
  EXPECT_FALSE(fs::exists(local_ + "/passwd"));

  auto through = alice_->run({"cp", id_ + "/up/output/model/weights.bin", local_ + "/x"});
  EXPECT_EQ(through.exit_code, 2) << through.err;
  EXPECT_NE(through.err.find("files.symlink"), std::string::npos) << through.err;

  auto traversal = alice_->run({"cp", id_ + "/../../../../../../etc/passwd", local_ + "/t"});
  EXPECT_EQ(traversal.exit_code, 2) << traversal.err;
  EXPECT_NE(traversal.err.find("'..' is not allowed"), std::string::npos) << traversal.err;
  EXPECT_FALSE(fs::exists(local_ + "/t"));

  // The whole output with -r: the files come, the links are named and skipped (exit 2).
  auto all = alice_->run({"cp", "-r", id_, local_ + "/all"});
  EXPECT_EQ(all.exit_code, 2) << all.err;
  EXPECT_NE(all.err.find("skipped passwd: a symbolic link"), std::string::npos) << all.err;
  EXPECT_NE(all.err.find("skipped up: a symbolic link"), std::string::npos) << all.err;
  EXPECT_TRUE(readFile(local_ + "/all/model/weights.bin") ==
              readFile(output_ + "/model/weights.bin"));
  EXPECT_FALSE(fs::exists(local_ + "/all/passwd"));
  EXPECT_FALSE(fs::exists(local_ + "/all/up"));
  for (const auto& entry : fs::recursive_directory_iterator(local_)) {
    if (entry.is_regular_file()) {
      EXPECT_NE(readFile(entry.path()), passwd) << entry.path() << " holds /etc/passwd";
    }
  }

  // Another user's job is not found; an admin may copy it.
  auto bob = as(kBobToken).run({"cp", id_ + "/model/weights.bin", local_ + "/bob.bin"});
  EXPECT_EQ(bob.exit_code, 3) << bob.err;
  auto ops = as(kOpsToken).run({"cp", id_ + "/model/sub/config.json", local_ + "/ops.json"});
  EXPECT_EQ(ops.exit_code, 0) << ops.err;
}

TEST_F(ServeE2eFilesTest, TheJobsCheckpointsAreCopiedFromBesideItsAttempts) {
  // The job's checkpoint folder: <staging_root>/jobs/<id>/checkpoints, beside attempts/.
  const fs::path checkpoints =
      fs::path(output_).parent_path().parent_path().parent_path() / "checkpoints";
  fs::create_directories(checkpoints / "checkpoint-20");
  writeFile((checkpoints / "checkpoint-20" / "adapter.bin").string(), "adapter bytes");
  auto listed = alice_->run({"cp", "-r", id_ + ":checkpoints", local_ + "/ckpt"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(readFile(local_ + "/ckpt/checkpoint-20/adapter.bin"), "adapter bytes");
}

}  // namespace
}  // namespace tuneplane::cli::testing
