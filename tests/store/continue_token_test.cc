// The continue token: what it encodes comes back, a token only fits the query it was made
// for, and nothing but a token this store made is accepted — as an error, never a crash.
#include "store/continue_token.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/jwt.h"

namespace tuneplane::store {
namespace {

JobQuery filtered() {
  JobQuery q;
  q.owner = "alice";
  q.phase = JobPhase::kRunning;
  q.name = "llm";
  q.label = std::make_pair("team", "nlp");
  return q;
}

TEST(ContinueTokenTest, RoundTripsThePositionForTheSameQuery) {
  const std::vector<ListPosition> positions = {
      {0, "a-00000000"},
      {1'700'000'000'123, "train-deadbeef"},
      {-5, "x') OR 1=1 --"},  // a hostile id is a value like any other
      {INT64_MAX, "ünïcødé-\"quoted\""},
  };
  for (const JobQuery& query : {JobQuery{}, filtered()}) {
    for (const auto& position : positions) {
      const std::string token = encodeContinue(position, query);
      auto decoded = decodeContinue(token, query);
      ASSERT_TRUE(decoded) << decoded.error().describe();
      EXPECT_EQ(*decoded, position);
    }
  }
}

TEST(ContinueTokenTest, TheLimitMayChangeBetweenPages) {
  JobQuery first = filtered();
  first.limit = 10;
  JobQuery next = filtered();
  next.limit = 500;
  EXPECT_TRUE(decodeContinue(encodeContinue({7, "a-1"}, first), next));
}

TEST(ContinueTokenTest, ATokenFitsOnlyTheFiltersItWasMadeFor) {
  const std::string token = encodeContinue({7, "a-1"}, filtered());
  std::vector<JobQuery> others(6, filtered());
  others[0].owner = "bob";
  others[1].owner.reset();
  others[2].phase = JobPhase::kQueued;
  others[3].name = "other";
  others[4].label = std::make_pair("team", "vision");
  others[5] = JobQuery{};
  for (const auto& other : others) {
    auto decoded = decodeContinue(token, other);
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.error().code, "store.bad_continue");
    EXPECT_EQ(decoded.error().field, "continue");
  }
}

TEST(ContinueTokenTest, AnythingElseIsABadContinueError) {
  const JobQuery query;
  auto b64 = [](const std::string& text) { return jwt::base64UrlEncode(text); };
  const std::string filters = R"({"owner":null,"phase":null,"name":null,"label":null})";
  const std::vector<std::string> bad = {
      "!!!",
      "AAAA====",
      "' OR 1=1 --",
      b64("not json"),
      b64("[]"),
      b64("{}"),
      b64("null"),
      b64(R"({"v":1,"c":5,"i":"a-1"})"),                               // no filters
      b64(R"({"v":2,"c":5,"i":"a-1","f":)" + filters + "}"),           // other version
      b64(R"({"v":1,"c":"5","i":"a-1","f":)" + filters + "}"),         // c not a number
      b64(R"({"v":1,"c":5.5,"i":"a-1","f":)" + filters + "}"),         // c not an integer
      b64(R"({"v":1,"c":5,"i":7,"f":)" + filters + "}"),               // i not a string
      b64(R"({"v":1,"c":5,"i":"","f":)" + filters + "}"),              // empty id
      b64(R"({"v":1,"c":5,"i":"a-1","f":)" + filters + R"(,"x":1})"),  // extra member
      b64(R"({"v":1,"c":5,"i":"a-1","f":{"owner":"eve"}})"),           // other filters
      std::string(kMaxContinueTokenBytes + 1, 'A'),
      std::string("\0\xff\xfe", 3),
  };
  for (const auto& token : bad) {
    auto decoded = decodeContinue(token, query);
    ASSERT_FALSE(decoded) << token;
    EXPECT_EQ(decoded.error().code, "store.bad_continue") << token;
    EXPECT_NE(decoded.error().message.find("first page"), std::string::npos);
  }
  // The well-formed twin of those rows is accepted, so each row fails for its own reason.
  EXPECT_TRUE(decodeContinue(b64(R"({"v":1,"c":5,"i":"a-1","f":)" + filters + "}"), query));
}

}  // namespace
}  // namespace tuneplane::store
