// The progress bar's line and when it draws.
#include "client_cli/progress_bar.h"

#include <gtest/gtest.h>

#include <sstream>

namespace tuneplane::cli {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(ProgressBarTest, LineShowsBarPercentAndSizes) {
  EXPECT_EQ(progressLine("custom-torch", kGiB, 4 * kGiB, 8),
            "hashing custom-torch  [##......]   25%  1.0 GiB / 4.0 GiB");
  EXPECT_EQ(progressLine("x", 4 * kGiB, 4 * kGiB, 4), "hashing x  [####]  100%  4.0 GiB / 4.0 GiB");
  EXPECT_EQ(progressLine("x", 0, 0, 4), "hashing x  [####]  100%  0 B / 0 B");
}

TEST(ProgressBarTest, DrawsOnlyLargeWorkWhenEnabledAndClearsItsLine) {
  std::ostringstream off;
  {
    ProgressBar bar(off, /*enabled=*/false);
    bar.update("x", kGiB, 2 * kGiB);
  }
  EXPECT_EQ(off.str(), "");

  std::ostringstream small;
  {
    ProgressBar bar(small, true, /*min_total=*/kGiB);
    bar.update("x", 10, 100);
  }
  EXPECT_EQ(small.str(), "");

  std::ostringstream out;
  {
    ProgressBar bar(out, true, /*min_total=*/100);
    bar.update("x", 10, 100);
    bar.update("x", 10, 100);  // same percentage: no redraw
    bar.update("x", 100, 100);
    bar.finish();
  }
  const std::string s = out.str();
  EXPECT_EQ(s.find("10%"), s.rfind("10%")) << s;  // drawn once
  EXPECT_NE(s.find("100%"), std::string::npos) << s;
  EXPECT_TRUE(s.ends_with("\r\033[K")) << s;  // the line is cleared at the end
}

}  // namespace
}  // namespace tuneplane::cli
