#include "moat/core/log.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>
#include <string>
#include <string_view>

namespace {

// An argument that counts how often it was formatted.
struct Counted {
    int* formatted;
};

}  // namespace

template <>
struct fmt::formatter<Counted> : fmt::formatter<int> {
    auto format(const Counted& c, fmt::format_context& ctx) const {
        ++*c.formatted;
        return fmt::formatter<int>::format(*c.formatted, ctx);
    }
};

namespace {

namespace log = moat::log;

// The lines go to a string through spdlog's default logger, as the daemon's go to stderr.
class LogTest : public ::testing::Test {
protected:
    void SetUp() override {
        previous_ = spdlog::default_logger();
        auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out_);
        auto logger = std::make_shared<spdlog::logger>("log_test", sink);
        logger->set_pattern("%l: %v");
        logger->set_level(spdlog::level::info);
        spdlog::set_default_logger(logger);
    }
    void TearDown() override { spdlog::set_default_logger(previous_); }

    std::string written() const { return out_.str(); }

private:
    std::ostringstream out_;
    std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(LogTest, ALineIsFormattedAsFmtFormatsIt) {
    log::info("{} rules, {:.1f}% blocked, {} from {}", 1000000, 12.345, std::string_view("none"),
              std::string("the cache"));
    log::warn("{:>6}|{:x}", "ab", 255U);
    log::error("{}", -7);
    EXPECT_EQ(written(),
              "info: 1000000 rules, 12.3% blocked, none from the cache\n"
              "warning:     ab|ff\n"
              "error: -7\n");
}

TEST_F(LogTest, ALineBelowTheLevelIsNeitherFormattedNorWritten) {
    int formatted = 0;
    log::debug("{}", Counted{&formatted});
    EXPECT_EQ(formatted, 0);
    EXPECT_EQ(written(), "");

    log::info("{}", Counted{&formatted});
    EXPECT_EQ(formatted, 1);
    EXPECT_EQ(written(), "info: 1\n");
}

TEST_F(LogTest, EnabledFollowsTheLoggersLevel) {
    EXPECT_FALSE(log::enabled(log::Level::debug));
    EXPECT_TRUE(log::enabled(log::Level::info));
    EXPECT_TRUE(log::enabled(log::Level::error));

    spdlog::set_level(spdlog::level::debug);
    EXPECT_TRUE(log::enabled(log::Level::debug));
    log::debug("now {}", "shown");

    spdlog::set_level(spdlog::level::err);
    EXPECT_FALSE(log::enabled(log::Level::warn));
    log::warn("not {}", "shown");
    EXPECT_EQ(written(), "debug: now shown\n");
}

TEST_F(LogTest, AFormatErrorAtRunTimeWritesTheFormatInstead) {
    // The width comes from an argument, so only run time finds it negative.
    EXPECT_NO_THROW(log::warn("cache {:{}} entries", 5, -1));
    const std::string line = written();
    EXPECT_EQ(line.rfind("warning: log line not formatted (", 0), 0U) << line;
    EXPECT_NE(line.find("): cache {:{}} entries\n"), std::string::npos) << line;
}

}  // namespace
