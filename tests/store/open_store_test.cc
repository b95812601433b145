// Which store a server.db value opens, and how the PostgreSQL password is handled: a path is
// SQLite, a postgresql:// URI is PostgreSQL; a password file readable by others is refused
// without its content in the message; URIs are redacted for logs; the store's SQL parameters
// are renumbered for PostgreSQL as intended.
#include "store/open_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "store/pg_connection.h"
#include "store/postgres_job_store.h"
#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;

TEST(OpenStoreTest, APathIsSqliteAndAUriIsPostgres) {
  EXPECT_TRUE(PostgresJobStore::isUri("postgresql://db.example/tuneplane"));
  EXPECT_TRUE(PostgresJobStore::isUri("postgres://u@h/d"));
  EXPECT_FALSE(PostgresJobStore::isUri("/var/lib/tuneplane/tuneplane.db"));
  EXPECT_FALSE(PostgresJobStore::isUri("postgresql.db"));
  tuneplane::testing::TempDir dir;
  auto store = openJobStore(dir.file("x.db"), std::nullopt);
  ASSERT_TRUE(store) << store.error().describe();
  EXPECT_NE(dynamic_cast<SqliteJobStore*>(store->store.get()), nullptr);
  EXPECT_EQ(store->lease, nullptr);  // one process: no lease
}

TEST(OpenStoreTest, APasswordFileOthersCanReadIsRefusedWithoutItsContent) {
  tuneplane::testing::TempDir dir;
  const std::string file = dir.write("pass", "hunter2-secret\n");
  ASSERT_EQ(::chmod(file.c_str(), 0644), 0);
  auto store = openJobStore("postgresql://127.0.0.1:1/none", file);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().field, "server.db_password_file");
  EXPECT_EQ(store.error().message.find("hunter2"), std::string::npos);
  // And a password file is no use to a SQLite path.
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  EXPECT_FALSE(openJobStore(dir.file("x.db"), file));
}

TEST(OpenStoreTest, UrisAreRedactedForLogs) {
  EXPECT_EQ(describeDb("postgresql://tp:s3cret@db:5432/tp"), "postgresql://tp:***@db:5432/tp");
  EXPECT_EQ(describeDb("postgresql://db/tp?password=s3cret&sslmode=require"),
            "postgresql://db/tp?password=***&sslmode=require");
  EXPECT_EQ(describeDb("/srv/tp.db"), "/srv/tp.db");
}

TEST(PgParametersTest, NumberedAndNamedParametersBecomeDollarNumbers) {
  std::unordered_map<std::string, int> names;
  int count = 0;
  EXPECT_EQ(toPostgresParameters("SELECT a FROM t WHERE x = ?2 AND y = ?1", names, count),
            "SELECT a FROM t WHERE x = $2 AND y = $1");
  EXPECT_EQ(count, 2);
  names.clear();
  EXPECT_EQ(toPostgresParameters(
                "SELECT ':no' FROM t WHERE o = :owner AND (a, b) < (:a, :b) AND p = :owner "
                "LIMIT :limit",
                names, count),
            "SELECT ':no' FROM t WHERE o = $1 AND (a, b) < ($2, $3) AND p = $1 LIMIT $4");
  EXPECT_EQ(count, 4);
  EXPECT_EQ(names.at(":limit"), 4);
}

}  // namespace
}  // namespace tuneplane::store
