// Notices a hand edit of the config file (inotify on its directory, so an editor's write-then-
// rename is seen too) and asks for a reload once the file has been quiet for a moment. The
// reload itself decides whether anything changed (the daemon skips a file whose text it already
// runs, such as one the API just wrote).
#pragma once

#include <array>
#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/steady_timer.hpp>
#include <filesystem>
#include <functional>

namespace moat::app {

class ConfigWatcher {
public:
    /// How long the file must stay unchanged before `changed` runs: editors write in bursts.
    static constexpr std::chrono::milliseconds kQuiet{300};

    ConfigWatcher(asio::io_context& io, std::function<void()> changed);
    ~ConfigWatcher();
    ConfigWatcher(const ConfigWatcher&) = delete;
    ConfigWatcher& operator=(const ConfigWatcher&) = delete;

    /// Starts watching `file`; false (and SIGHUP still works) when inotify is not available.
    bool watch(const std::filesystem::path& file);
    void stop();

private:
    void read();

    std::function<void()> changed_;
    asio::posix::stream_descriptor descriptor_;
    asio::steady_timer quiet_;
    std::string name_;
    alignas(8) std::array<char, 4096> events_{};
};

}  // namespace moat::app
