// The output readers: the path rules from a table; areaOf from the stored attempt dir; and
// listing and reading on real files — pages that resume at the directory-stream position
// and read only what they return, and every hazard a job can plant (a symlink as a file, as
// a directory on the way, as the area itself; a hard link; a FIFO; a directory where a file
// is asked), refused with its code.
#include "attempt/output_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "../catalog/temp_dir.h"
#include "attempt/error_codes.h"
#include "support/test_files.h"

namespace tuneplane::attempt {
namespace {

namespace fs = std::filesystem;
using tuneplane::testing::TempDir;

// ---- the path rules ------------------------------------------------------------------------

struct PathCase {
  const char* name;
  std::string path;
  std::vector<std::string> parts;  // when accepted
  std::string refusal;             // a fragment of the rule's message when refused
};

TEST(OutputPathRulesTest, EachRuleIsNamedAndCleanPathsSplit) {
  const std::string long_name(kMaxNameBytes + 1, 'a');
  const PathCase cases[] = {
      {"root", "", {}, ""},
      {"one", "model.bin", {"model.bin"}, ""},
      {"nested", "a/b/c.txt", {"a", "b", "c.txt"}, ""},
      {"trailing slash", "a/b/", {"a", "b"}, ""},
      {"dots inside names", "..a/b..", {"..a", "b.."}, ""},
      {"spaces and unicode", "r\xC3\xA9sum\xC3\xA9 1.txt", {"r\xC3\xA9sum\xC3\xA9 1.txt"}, ""},
      {"dotdot", "../secret", {}, "'..' is not allowed"},
      {"dotdot inside", "a/../../b", {}, "'..' is not allowed"},
      {"dotdot alone", "..", {}, "'..' is not allowed"},
      {"dot", "./a", {}, "'.' is not allowed"},
      {"absolute", "/etc/passwd", {}, "no leading '/'"},
      {"empty component", "a//b", {}, "empty component"},
      {"nul", std::string("a\0b", 3), {}, "NUL"},
      {"long component", long_name, {}, "longer than 255 bytes"},
      {"long path", std::string(kMaxPathBytes + 1, 'a'), {}, "longer than 4096 bytes"},
  };
  for (const PathCase& c : cases) {
    auto parts = checkOutputPath(c.path);
    if (c.refusal.empty()) {
      ASSERT_TRUE(parts) << c.name << ": " << parts.error().describe();
      EXPECT_EQ(*parts, c.parts) << c.name;
    } else {
      ASSERT_FALSE(parts) << c.name;
      EXPECT_EQ(parts.error().code, codes::kFilesInvalidPath) << c.name;
      EXPECT_EQ(parts.error().field, "path") << c.name;
      EXPECT_NE(parts.error().message.find(c.refusal), std::string::npos)
          << c.name << ": " << parts.error().message;
    }
  }
}

TEST(OutputAreaTest, AreasAreFoundBesideTheStoredAttemptDir) {
  auto output = areaOf("/srv/stage/jobs/j-1a2b3c4d/attempts/2", "j-1a2b3c4d", OutputArea::kOutput);
  ASSERT_TRUE(output) << output.error().describe();
  EXPECT_EQ(output->root, "/srv/stage");
  EXPECT_EQ(output->components,
            (std::vector<std::string>{"jobs", "j-1a2b3c4d", "attempts", "2", "output"}));
  auto checkpoints =
      areaOf("/srv/stage/jobs/j-1a2b3c4d/attempts/2", "j-1a2b3c4d", OutputArea::kCheckpoints);
  ASSERT_TRUE(checkpoints);
  EXPECT_EQ(checkpoints->components,
            (std::vector<std::string>{"jobs", "j-1a2b3c4d", "checkpoints"}));
  auto at_root = areaOf("/jobs/j/attempts/1", "j", OutputArea::kOutput);
  ASSERT_TRUE(at_root);
  EXPECT_EQ(at_root->root, "/");
  // Not the layout, or another job's: refused, never guessed.
  for (const char* bad : {"/srv/stage/jobs/other/attempts/2", "/srv/stage/jobs/j-1a2b3c4d/x/2",
                          "/srv/stage/jobs/j-1a2b3c4d/attempts/two", "relative/jobs/j/attempts/1",
                          "/srv/../jobs/j-1a2b3c4d/attempts/1"}) {
    EXPECT_FALSE(areaOf(bad, "j-1a2b3c4d", OutputArea::kOutput)) << bad;
  }
}

// ---- on real files ---------------------------------------------------------------------------

class OutputFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    attempt_dir_ = tmp_.path() + "/jobs/job-1/attempts/1";
    fs::create_directories(attempt_dir_ + "/output");
    output_ = attempt_dir_ + "/output";
    auto area = areaOf(attempt_dir_, "job-1", OutputArea::kOutput);
    ASSERT_TRUE(area);
    area_ = *area;
  }

  std::string write(const std::string& rel, const std::string& content) {
    const fs::path p = fs::path(output_) / rel;
    fs::create_directories(p.parent_path());
    test::writeFile(p, content);
    return p.string();
  }
  Result<OutputFile> open(const std::string& rel) {
    auto parts = checkOutputPath(rel);
    EXPECT_TRUE(parts);
    return openOutputFile(area_, *parts);
  }
  Result<ListPage> list(const std::string& rel, const ListPosition& from = {},
                        std::size_t limit = kDefaultListLimit) {
    auto parts = checkOutputPath(rel);
    EXPECT_TRUE(parts);
    return listOutputDirectory(area_, *parts, from, limit);
  }
  // Every page of `rel`, `limit` at a time: the names in the order they came.
  std::vector<std::string> listAll(const std::string& rel, std::size_t limit, int* pages) {
    std::vector<std::string> seen;
    ListPosition from;
    *pages = 0;
    while (*pages < 10000) {  // a bound on a loop that never ends
      auto page = list(rel, from, limit);
      EXPECT_TRUE(page) << page.error().describe();
      if (!page) break;
      EXPECT_LE(page->entries.size(), limit);
      for (const auto& e : page->entries) seen.push_back(e.name);
      ++*pages;
      if (!page->next) break;
      from = *page->next;
    }
    return seen;
  }
  static std::vector<FileEntry> byName(std::vector<FileEntry> entries) {
    std::sort(entries.begin(), entries.end(),
              [](const FileEntry& a, const FileEntry& b) { return a.name < b.name; });
    return entries;
  }
  static std::string readAll(const OutputFile& f) {
    std::string out(f.size, '\0');
    auto n = f.readAt(0, out.data(), out.size());
    EXPECT_TRUE(n);
    out.resize(n ? *n : 0);
    return out;
  }

  TempDir tmp_;
  std::string attempt_dir_;
  std::string output_;
  AreaLocation area_;
};

TEST_F(OutputFilesTest, AFileIsReadByOffsetWithItsSizeTimeAndEtag) {
  write("weights/model.bin", "0123456789");
  auto f = open("weights/model.bin");
  ASSERT_TRUE(f) << f.error().describe();
  EXPECT_EQ(f->size, 10u);
  EXPECT_EQ(f->name, "model.bin");
  EXPECT_GT(f->modified_ms, 0);
  EXPECT_EQ(f->etag.front(), '"');
  EXPECT_EQ(readAll(*f), "0123456789");
  char buf[4];
  auto n = f->readAt(7, buf, sizeof buf);
  ASSERT_TRUE(n);
  EXPECT_EQ(std::string(buf, *n), "789");
  // The etag changes with the content.
  write("weights/model.bin", "01234567890");
  auto again = open("weights/model.bin");
  ASSERT_TRUE(again);
  EXPECT_NE(again->etag, f->etag);
}

TEST_F(OutputFilesTest, ListingHasEachEntrysTypeSizeAndTime) {
  write("b.txt", "bb");
  write("a.txt", "a");
  write("sub/x", "xyz");
  ASSERT_EQ(::symlink("/etc/passwd", (output_ + "/link").c_str()), 0);
  auto page = list("");
  ASSERT_TRUE(page) << page.error().describe();
  ASSERT_EQ(page->entries.size(), 4u);
  EXPECT_FALSE(page->next);
  const std::vector<FileEntry> entries = byName(page->entries);  // the directory's order
  EXPECT_EQ(entries[0].name, "a.txt");
  EXPECT_EQ(entries[0].type, FileType::kFile);
  EXPECT_EQ(entries[0].size, 1u);
  EXPECT_GT(entries[0].modified_ms, 0);
  EXPECT_EQ(entries[1].name, "b.txt");
  EXPECT_EQ(entries[2].name, "link");
  EXPECT_EQ(entries[2].type, FileType::kSymlink);  // listed, never followed
  EXPECT_EQ(entries[3].name, "sub");
  EXPECT_EQ(entries[3].type, FileType::kDirectory);

  auto sub = list("sub/");
  ASSERT_TRUE(sub);
  ASSERT_EQ(sub->entries.size(), 1u);
  EXPECT_EQ(sub->entries[0].name, "x");
}

TEST_F(OutputFilesTest, PagesWalkABigDirectoryWithoutRepeatsOrGaps) {
  const int kFiles = 2500;
  std::vector<std::string> expected;
  for (int i = 0; i < kFiles; ++i) {
    write("many/f" + std::to_string(i), "");
    expected.push_back("f" + std::to_string(i));
  }
  int pages = 0;
  std::vector<std::string> seen = listAll("many", 1000, &pages);
  EXPECT_EQ(pages, 3);
  std::sort(seen.begin(), seen.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(seen, expected);  // each name once
  // A page of one at a time walks the same names (the position of every entry resumes).
  std::vector<std::string> one_by_one = listAll("many", 1, &pages);
  EXPECT_EQ(pages, kFiles);
  std::sort(one_by_one.begin(), one_by_one.end());
  EXPECT_EQ(one_by_one, expected);
}

TEST_F(OutputFilesTest, APositionIsBoundToItsDirectory) {
  for (int i = 0; i < 5; ++i) write("a/f" + std::to_string(i), "");
  for (int i = 0; i < 5; ++i) write("b/f" + std::to_string(i), "");
  auto first = list("a", {}, 2);
  ASSERT_TRUE(first) << first.error().describe();
  ASSERT_TRUE(first->next);
  EXPECT_NE(first->next->cookie, 0);
  auto elsewhere = list("b", *first->next, 2);  // another folder's position
  ASSERT_FALSE(elsewhere);
  EXPECT_EQ(elsewhere.error().code, codes::kFilesBadPosition);
  EXPECT_EQ(elsewhere.error().message.find(tmp_.path()), std::string::npos);
  auto negative = list("a", {-5, first->next->directory}, 2);  // the filesystem refuses it
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().code, codes::kFilesBadPosition);
  auto second = list("a", *first->next, 2);
  ASSERT_TRUE(second) << second.error().describe();
  EXPECT_EQ(second->entries.size(), 2u);
}

// A page costs what it holds (issue 45): each page of 10 of a 5,000-entry folder reads at
// most the page, the one entry after it (which says "more") and "." and "..", counted at
// readdir — never the whole folder, as a page that sorted the folder did.
TEST_F(OutputFilesTest, APageReadsOnlyTheEntriesItHoldsWhateverTheFoldersSize) {
  const int kFiles = 5000;
  const std::size_t kLimit = 10;
  fs::create_directories(output_ + "/huge");
  for (int i = 0; i < kFiles; ++i) test::writeFile(output_ + "/huge/f" + std::to_string(i), "");
  ListPosition from;
  for (int i = 0; i < 3; ++i) {
    auto page = list("huge", from, kLimit);
    ASSERT_TRUE(page) << page.error().describe();
    ASSERT_EQ(page->entries.size(), kLimit);
    ASSERT_TRUE(page->next);
    EXPECT_LE(page->entries_read, kLimit + 1 + 2) << "page " << i << " read the folder";
    from = *page->next;
  }
}

TEST_F(OutputFilesTest, ASymlinkIsRefusedAsAFileAsADirectoryAndAsTheArea) {
  write("real/secret", "no");
  ASSERT_EQ(::symlink("/etc/passwd", (output_ + "/passwd").c_str()), 0);
  ASSERT_EQ(::symlink("real", (output_ + "/alias").c_str()), 0);
  auto as_file = open("passwd");
  ASSERT_FALSE(as_file);
  EXPECT_EQ(as_file.error().code, codes::kFilesSymlink);
  EXPECT_EQ(as_file.error().message.find(tmp_.path()), std::string::npos)
      << "no server path: " << as_file.error().message;
  EXPECT_NE(as_file.error().message.find("output/passwd"), std::string::npos);
  auto through = open("alias/secret");
  ASSERT_FALSE(through);
  EXPECT_EQ(through.error().code, codes::kFilesSymlink);
  auto listed = list("alias");
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().code, codes::kFilesSymlink);

  // The job replaced output/ itself by a link to another job's output.
  const std::string other = tmp_.path() + "/jobs/other/attempts/1/output";
  fs::create_directories(other);
  test::writeFile(other + "/theirs", "theirs");
  fs::remove_all(output_);
  ASSERT_EQ(::symlink(other.c_str(), output_.c_str()), 0);
  auto area_link = open("theirs");
  ASSERT_FALSE(area_link);
  EXPECT_EQ(area_link.error().code, codes::kFilesSymlink);
  EXPECT_FALSE(outputAreaExists(area_));
}

TEST_F(OutputFilesTest, HardLinksFifosAndWrongKindsAreRefused) {
  const std::string elsewhere = tmp_.path() + "/secret.key";
  test::writeFile(elsewhere, "key");
  ASSERT_EQ(::link(elsewhere.c_str(), (output_ + "/key").c_str()), 0);
  auto hard = open("key");
  ASSERT_FALSE(hard);
  EXPECT_EQ(hard.error().code, codes::kFilesHardLink);

  ASSERT_EQ(::mkfifo((output_ + "/pipe").c_str(), 0600), 0);
  auto fifo = open("pipe");  // would block forever if it were opened for reading
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().code, codes::kFilesNotRegularFile);

  write("dir/file", "x");
  auto dir = open("dir");
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().code, codes::kFilesIsDirectory);
  auto through_file = open("dir/file/more");
  ASSERT_FALSE(through_file);
  EXPECT_EQ(through_file.error().code, codes::kFilesNotDirectory);
  auto list_file = list("dir/file");
  ASSERT_FALSE(list_file);
  EXPECT_EQ(list_file.error().code, codes::kFilesNotDirectory);
  auto missing = open("nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, codes::kFilesNotFound);
  EXPECT_NE(missing.error().message.find("output/nope"), std::string::npos);
}

TEST_F(OutputFilesTest, TheCheckpointsAreaExistsOnlyWhenItsDirectoryDoes) {
  auto area = areaOf(attempt_dir_, "job-1", OutputArea::kCheckpoints);
  ASSERT_TRUE(area);
  EXPECT_FALSE(outputAreaExists(*area));
  auto none = listOutputDirectory(*area, {}, {}, 10);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, codes::kFilesNotFound);
  EXPECT_EQ(none.error().message, "checkpoints/ does not exist");
  fs::create_directories(tmp_.path() + "/jobs/job-1/checkpoints/checkpoint-100");
  EXPECT_TRUE(outputAreaExists(*area));
  auto page = listOutputDirectory(*area, {}, {}, 10);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->entries.size(), 1u);
  EXPECT_EQ(page->entries[0].name, "checkpoint-100");
}

TEST_F(OutputFilesTest, AFileReplacedAfterOpeningIsStillTheOneOpened) {
  write("f", "first");
  auto f = open("f");
  ASSERT_TRUE(f);
  fs::remove(output_ + "/f");
  write("f", "second, longer");
  EXPECT_EQ(readAll(*f), "first");
}

}  // namespace
}  // namespace tuneplane::attempt
