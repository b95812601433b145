// The code folder a job ships (common/workdir_tree.h): its rules and limits, each refusal
// naming its rule and the limit passed; the archive round trip; the hash of the tree.
#include "common/workdir_tree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace tuneplane::workdir {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

Entry file(std::string path, std::string content, bool executable = false) {
  return Entry{std::move(path), false, executable, std::move(content)};
}

Tree tree(std::vector<Entry> entries, const Limits& limits = {}) {
  auto made = makeTree(std::move(entries), limits);
  EXPECT_TRUE(made) << made.error().describe();
  return made ? *made : Tree{};
}

std::string tarOf(const Tree& t) {
  auto archive = writeWorkdirTar(t);
  EXPECT_TRUE(archive) << archive.error().describe();
  return archive ? *archive : "";
}

// One ustar header of `type` for `path` (a link's target in `link`), with its checksum.
std::string header(const std::string& path, char type, std::size_t size = 0,
                   const std::string& link = "") {
  std::string h(512, '\0');
  std::memcpy(h.data(), path.data(), std::min<std::size_t>(path.size(), 100));
  std::snprintf(h.data() + 100, 8, "%07o", 0644u);
  std::snprintf(h.data() + 124, 12, "%011zo", size);
  h[156] = type;
  std::memcpy(h.data() + 157, link.data(), std::min<std::size_t>(link.size(), 100));
  std::memcpy(h.data() + 257, "ustar", 6);
  std::memcpy(h.data() + 263, "00", 2);
  std::memset(h.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(h.data() + 148, 8, "%06o", sum);
  return h;
}

std::string archiveOf(std::initializer_list<std::string> blocks) {
  std::string out;
  for (const auto& b : blocks) out += b;
  out.append(1024, '\0');
  return out;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/tp-workdir-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  void write(const std::string& rel, const std::string& content) const {
    fs::create_directories((path_ / rel).parent_path());
    std::ofstream(path_ / rel, std::ios::binary) << content;
  }

 private:
  fs::path path_;
};

TEST(WorkdirTree, ParentsAreAddedAndEntriesSorted) {
  const Tree t = tree({file("src/b.py", "b"), file("a.py", "a"), file("src/lib/c.py", "cc")});
  std::vector<std::string> paths;
  for (const auto& e : t.entries) paths.push_back(e.path);
  EXPECT_EQ(paths,
            (std::vector<std::string>{"a.py", "src", "src/b.py", "src/lib", "src/lib/c.py"}));
  EXPECT_EQ(t.files, 3u);
  EXPECT_EQ(t.bytes, 4u);
}

TEST(WorkdirTree, TheHashCoversPathsModesAndContentsAndNothingElse) {
  const std::string base = workdirTreeSha256(tree({file("train.py", "print(1)\n")}));
  EXPECT_EQ(base.size(), 64u);
  // The same files listed in another order, or with their folders listed: the same tree.
  EXPECT_EQ(
      workdirTreeSha256(tree({file("d/x", "1"), file("y", "2")})),
      workdirTreeSha256(tree({file("y", "2"), Entry{"d", true, false, {}}, file("d/x", "1")})));
  EXPECT_NE(workdirTreeSha256(tree({file("train.py", "print(2)\n")})), base);
  EXPECT_NE(workdirTreeSha256(tree({file("train2.py", "print(1)\n")})), base);
  EXPECT_NE(workdirTreeSha256(tree({file("train.py", "print(1)\n", true)})), base);
  // A path and content cannot trade bytes across the boundary.
  EXPECT_NE(workdirTreeSha256(tree({file("ab", "c")})), workdirTreeSha256(tree({file("a", "bc")})));
}

TEST(WorkdirTree, TheArchiveRoundTripsAndIsTheSameBytesEveryTime) {
  const std::string long_path = std::string(90, 'd') + "/" + std::string(90, 'f') + ".py";
  const Tree t = tree({file("run.sh", "#!/bin/sh\necho hi\n", true), file(long_path, "x"),
                       file("empty", ""), Entry{"data/empty-folder", true, false, {}}});
  const std::string archive = tarOf(t);
  EXPECT_EQ(archive, tarOf(t));
  auto back = parseWorkdirTar(archive, {});
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(*back, t);
  EXPECT_EQ(workdirTreeSha256(*back), workdirTreeSha256(t));
}

TEST(WorkdirTree, ReferencesAreShaPrefixedHex) {
  const std::string hex(64, 'a');
  EXPECT_EQ(referenceHex(workdirReference(hex)), hex);
  EXPECT_EQ(referenceHex(hex), "");
  EXPECT_EQ(referenceHex("sha256:" + std::string(63, 'a')), "");
  EXPECT_EQ(referenceHex("sha256:" + std::string(64, 'A')), "");
}

struct Refusal {
  const char* name;
  std::string archive;
  Limits limits;
  const char* code;
  const char* says;
};

class WorkdirRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(WorkdirRefusalTest, IsRefusedNamingItsRuleAndField) {
  const Refusal& r = GetParam();
  auto t = parseWorkdirTar(r.archive, r.limits);
  ASSERT_FALSE(t) << r.name;
  EXPECT_EQ(t.error().code, r.code);
  EXPECT_EQ(t.error().field, "workdir");
  EXPECT_THAT(t.error().message, HasSubstr(r.says));
}

std::string manyFiles(int n) {
  std::vector<Entry> entries;
  for (int i = 0; i < n; ++i) entries.push_back(file("f" + std::to_string(i), "x"));
  auto t = makeTree(std::move(entries), {.max_bytes = kDefaultMaxBytes, .max_files = 100'000});
  return t ? *writeWorkdirTar(*t) : "";
}

INSTANTIATE_TEST_SUITE_P(
    Rules, WorkdirRefusalTest,
    ::testing::Values(
        Refusal{"TooManyFiles", manyFiles(4), {.max_bytes = 100, .max_files = 3},
                codes::kTooManyFiles, "server.workdir_max_files"},
        Refusal{"TooLarge", archiveOf({header("big", '0', 11), std::string(512, 'x')}),
                {.max_bytes = 10, .max_files = 10}, codes::kTooLarge, "more than 10 bytes"},
        Refusal{"SymlinkOut", archiveOf({header("escape", '2', 0, "../../etc/passwd")}), {},
                codes::kSymlink, "../../etc/passwd"},
        Refusal{"HardLink", archiveOf({header("same", '1', 0, "/etc/shadow")}), {},
                codes::kSymlink, "is a link"},
        Refusal{"DotDot", archiveOf({header("../outside.py", '0')}), {}, codes::kInvalidPath,
                "'..'"},
        Refusal{"DotDotInside", archiveOf({header("a/../../b", '0')}), {}, codes::kInvalidPath,
                "'..'"},
        Refusal{"Absolute", archiveOf({header("/etc/cron.d/x", '0')}), {}, codes::kInvalidPath,
                "absolute"},
        Refusal{"Device", archiveOf({header("dev", '3')}), {}, codes::kSpecialFile, "device"},
        Refusal{"Fifo", archiveOf({header("pipe", '6')}), {}, codes::kSpecialFile, "FIFO"},
        Refusal{"ControlCharacter", archiveOf({header("a\nb", '0')}), {}, codes::kInvalidPath,
                "control"},
        Refusal{"Twice", archiveOf({header("a", '0'), header("a", '0')}), {},
                codes::kDuplicatePath, "twice"},
        Refusal{"FileAndFolder", archiveOf({header("a", '0'), header("a/b", '0')}), {},
                codes::kDuplicatePath, "file and a folder"},
        Refusal{"PaxHeader", archiveOf({header("pax", 'x')}), {}, codes::kInvalidArchive, "pax"},
        Refusal{"BadChecksum",
                [] {
                  std::string h = header("a", '0');
                  h[0] = 'b';
                  return archiveOf({h});
                }(),
                {}, codes::kInvalidArchive, "checksum"},
        Refusal{"CutShort", header("a", '0', 600) + std::string(100, 'x'), {},
                codes::kInvalidArchive, "cut short"},
        Refusal{"NotTar", std::string(700, 'z'), {}, codes::kInvalidArchive, "checksum"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(WorkdirDir, ReadsFilesFoldersAndTheExecutableBit) {
  TempDir dir;
  dir.write("train.py", "print('hi')\n");
  dir.write("lib/util.py", "X = 1\n");
  dir.write("run.sh", "#!/bin/sh\n");
  fs::permissions(dir.path() / "run.sh", fs::perms::owner_all);
  fs::create_directories(dir.path() / "empty");
  auto t = readWorkdirDir(dir.path().string(), {});
  ASSERT_TRUE(t) << t.error().describe();
  std::vector<std::string> paths;
  for (const auto& e : t->entries) paths.push_back(e.path + (e.executable ? "*" : ""));
  EXPECT_EQ(paths,
            (std::vector<std::string>{"empty", "lib", "lib/util.py", "run.sh*", "train.py"}));
  // What the folder reads as is what its archive carries.
  auto back = parseWorkdirTar(tarOf(*t), {});
  ASSERT_TRUE(back);
  EXPECT_EQ(workdirTreeSha256(*back), workdirTreeSha256(*t));
}

TEST(WorkdirDir, ALinkToAFileInsideIsSentAsThatFile) {
  TempDir dir;
  dir.write("real.py", "code");
  fs::create_symlink("real.py", dir.path() / "alias.py");
  auto t = readWorkdirDir(dir.path().string(), {});
  ASSERT_TRUE(t) << t.error().describe();
  ASSERT_EQ(t->entries.size(), 2u);
  EXPECT_EQ(t->entries[0].path, "alias.py");
  EXPECT_EQ(t->entries[0].content, "code");
}

TEST(WorkdirDir, ALinkOutOfTheFolderIsRefused) {
  TempDir dir;
  dir.write("train.py", "x");
  fs::create_symlink("/etc/hostname", dir.path() / "secret");
  auto t = readWorkdirDir(dir.path().string(), {});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, codes::kSymlink);
  EXPECT_THAT(t.error().message, HasSubstr("outside the folder"));
}

TEST(WorkdirDir, AFifoIsRefused) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir.path() / "pipe").c_str(), 0600), 0);
  auto t = readWorkdirDir(dir.path().string(), {});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, codes::kSpecialFile);
}

TEST(WorkdirDir, TheLimitsStopTheWalk) {
  TempDir dir;
  for (int i = 0; i < 5; ++i) dir.write("f" + std::to_string(i), "12345");
  auto many = readWorkdirDir(dir.path().string(), {.max_bytes = 1000, .max_files = 4});
  ASSERT_FALSE(many);
  EXPECT_EQ(many.error().code, codes::kTooManyFiles);
  auto large = readWorkdirDir(dir.path().string(), {.max_bytes = 24, .max_files = 100});
  ASSERT_FALSE(large);
  EXPECT_EQ(large.error().code, codes::kTooLarge);
  EXPECT_THAT(large.error().message, HasSubstr("server.workdir_max_bytes"));
}

}  // namespace
}  // namespace tuneplane::workdir
