// Files the store must not use are refused at open with a clear error, and keep every
// byte: garbage, a truncated or damaged database, another program's database, and one
// whose schema version is newer than this build knows.
#include "store/schema.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "store/sqlite_connection.h"
#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;

class SchemaRefusalTest : public ::testing::Test {
 protected:
  // A real store file with enough rows to span many pages (one commit: each costs an
  // fsync), closed cleanly.
  std::string populated(const std::string& name) {
    const std::string path = dir_.file(name);
    auto store = openOrDie(path);
    EXPECT_NE(store, nullptr);
    const JobRecord job = sampleJob("fill-00000001");
    Change change{job, {}, {created(job)}};
    for (int n = 1; n <= 300; ++n) {
      change.attempts.push_back(sampleAttempt(job.id, n));
      change.attempts.back().reason = std::string(200, 'r');
      change.events.push_back(event(job.id, n, "Queued", "Running"));
    }
    if (store) {
      EXPECT_TRUE(store->commit(change));
    }
    return path;
  }
  // Opens `path`, expects `code`, and checks that the file is byte for byte what it was.
  Error expectRefused(const std::string& path, const std::string& code) {
    const std::string before = readBytes(path);
    auto store = SqliteJobStore::open(path);
    EXPECT_FALSE(store) << path;
    const Error error = store ? Error{} : store.error();
    EXPECT_EQ(error.code, code) << error.describe();
    EXPECT_EQ(error.field, "db");
    EXPECT_NE(error.message.find(path), std::string::npos) << error.message;
    EXPECT_NE(error.message.find("left as it is"), std::string::npos) << error.message;
    EXPECT_EQ(readBytes(path), before) << "the refused file was modified";
    return error;
  }
  static void overwrite(const std::string& path, std::size_t offset, const std::string& bytes) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(offset));
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  tuneplane::testing::TempDir dir_;
};

TEST_F(SchemaRefusalTest, GarbageIsCorrupt) {
  std::string garbage;
  for (int i = 0; i < 512; ++i) garbage += "not a database! ";
  expectRefused(dir_.write("garbage.db", garbage), "store.corrupt");
}

TEST_F(SchemaRefusalTest, AFewBytesAreCorrupt) {
  expectRefused(dir_.write("short.db", "SQLite format 3"), "store.corrupt");
}

TEST_F(SchemaRefusalTest, ATruncatedDatabaseIsCorrupt) {
  const std::string path = populated("truncated.db");
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 16u * 4096u);
  std::filesystem::resize_file(path, size / 2);
  expectRefused(path, "store.corrupt");
}

TEST_F(SchemaRefusalTest, ADamagedPageIsCorrupt) {
  const std::string path = populated("damaged.db");
  const auto size = std::filesystem::file_size(path);
  // Scribble over the b-tree pages in the middle of the file (not the header page).
  overwrite(path, size / 2 - 4096, std::string(8192, '\x5a'));
  expectRefused(path, "store.corrupt");
}

TEST_F(SchemaRefusalTest, ANewerVersionIsRefusedNamingBothVersions) {
  const std::string path = populated("newer.db");
  const int newer = currentSchemaVersion() + 7;
  {
    auto c = SqliteConnection::open(path, SQLITE_OPEN_READWRITE, 1000);
    ASSERT_TRUE(c);
    ASSERT_TRUE((*c)->exec("PRAGMA user_version = " + std::to_string(newer)));
  }
  const Error error = expectRefused(path, "store.newer_version");
  EXPECT_NE(error.message.find("version " + std::to_string(newer)), std::string::npos)
      << error.message;
  EXPECT_NE(error.message.find("(" + std::to_string(currentSchemaVersion()) + ")"),
            std::string::npos)
      << error.message;
}

TEST_F(SchemaRefusalTest, AnotherProgramsDatabaseIsRefused) {
  const std::string path = dir_.file("other.db");
  {
    auto c = SqliteConnection::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000);
    ASSERT_TRUE(c);
    ASSERT_TRUE((*c)->exec("CREATE TABLE jobs (x); INSERT INTO jobs VALUES (1)"));
  }
  expectRefused(path, "store.not_tuneplane");
  {
    auto c = SqliteConnection::open(path, SQLITE_OPEN_READWRITE, 1000);
    ASSERT_TRUE(c);
    ASSERT_TRUE((*c)->exec("PRAGMA application_id = 42; PRAGMA user_version = 1"));
  }
  expectRefused(path, "store.not_tuneplane");
}

TEST_F(SchemaRefusalTest, AStoreOpensAgainAfterAllThat) {
  const std::string path = populated("fine.db");
  auto store = openOrDie(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->getJob("fill-00000001").value()->attempts.size(), 300u);
}

}  // namespace
}  // namespace tuneplane::store
