#include "moat/lists/fetch.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <string_view>
#include <system_error>

#include "curl_library.hpp"
#include "moat/lists/copy_check.hpp"

namespace moat::lists {
namespace {

constexpr long kMaxRedirects = 5;

struct Transfer {
    std::FILE* file = nullptr;
    const std::atomic<bool>* cancel = nullptr;
    std::uint64_t max_bytes = 0;
    ContentDigest digest;  ///< of the body as written: recorded in the status at install
    bool too_big = false;
    int write_errno = 0;  ///< why writing the body failed; 0 while it did not
    Validators validators;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto& t = *static_cast<Transfer*>(user);
    const std::size_t n = size * count;
    if (t.digest.bytes() + n > t.max_bytes) {
        t.too_big = true;
        return 0;  // ends the transfer with CURLE_WRITE_ERROR
    }
    if (std::fwrite(data, 1, n, t.file) != n) {
        t.write_errno = errno != 0 ? errno : EIO;
        return 0;
    }
    t.digest.add(std::string_view(data, n));
    return n;
}

/// The value of header `name` in `line` ("Name: value\r\n"), trimmed; empty when another header.
std::string_view header_value(std::string_view line, std::string_view name) {
    if (line.size() <= name.size() || line[name.size()] != ':') {
        return {};
    }
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char a = line[i] >= 'A' && line[i] <= 'Z' ? static_cast<char>(line[i] + 32) : line[i];
        if (a != name[i]) {
            return {};
        }
    }
    std::string_view v = line.substr(name.size() + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) {
        v.remove_prefix(1);
    }
    while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) {
        v.remove_suffix(1);
    }
    return v;
}

int on_progress(void* user, curl_off_t /*dltotal*/, curl_off_t /*dlnow*/, curl_off_t /*ultotal*/,
                curl_off_t /*ulnow*/) {
    const auto& t = *static_cast<const Transfer*>(user);
    return t.cancel != nullptr && t.cancel->load(std::memory_order_relaxed) ? 1 : 0;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
    auto& t = *static_cast<Transfer*>(user);
    const std::string_view line(data, size * count);
    if (line.starts_with("HTTP/")) {
        t.validators = {};  // a new response (after a redirect): only the last one's count
    } else if (auto etag = header_value(line, "etag"); !etag.empty()) {
        t.validators.etag = etag;
    } else if (auto lm = header_value(line, "last-modified"); !lm.empty()) {
        t.validators.last_modified = lm;
    }
    return size * count;
}

using EasyHandle = std::unique_ptr<CURL, void (*)(CURL*)>;
using HeaderList = std::unique_ptr<curl_slist, void (*)(curl_slist*)>;

void set_options(const detail::CurlLibrary& curl, CURL* h, const std::string& url,
                 const FetchOptions& o, Transfer& t, curl_slist* headers) {
    const auto setopt = curl.easy_setopt;
    setopt(h, CURLOPT_URL, url.c_str());
    setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    setopt(h, CURLOPT_MAXREDIRS, kMaxRedirects);
    setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.connect_timeout.count()));
    setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(o.timeout.count()));
    setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(o.max_bytes));
    setopt(h, CURLOPT_NOSIGNAL, 1L);         // timeouts without SIGALRM: we are threaded
    setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // gzip/deflate/br as libcurl supports
    setopt(h, CURLOPT_USERAGENT, o.user_agent.c_str());
    setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!o.ca_file.empty()) {
        // CAINFO replaces the default bundle; CAPATH keeps the system store trusted as well.
        setopt(h, CURLOPT_CAINFO, o.ca_file.c_str());
        setopt(h, CURLOPT_CAPATH, "/etc/ssl/certs");
    }
    setopt(h, CURLOPT_HTTPHEADER, headers);
    setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    setopt(h, CURLOPT_WRITEDATA, &t);
    setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    setopt(h, CURLOPT_HEADERDATA, &t);
    setopt(h, CURLOPT_NOPROGRESS, 0L);
    setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    setopt(h, CURLOPT_XFERINFODATA, &t);
}

std::string write_error(const std::filesystem::path& path, int error) {
    return "cannot write " + path.string() + ": " +
           std::error_code(error, std::generic_category()).message();
}

std::string size_text(std::uint64_t bytes) {
    return bytes >= (1U << 20U) ? std::to_string(bytes >> 20U) + " MiB"
                                : std::to_string(bytes) + " bytes";
}

}  // namespace

FetchResult fetch_to_file(const std::string& url, const Validators& have,
                          const std::filesystem::path& out, const FetchOptions& options) {
    FetchResult result;
    const detail::CurlLibrary& curl = detail::curl_library();
    if (!curl.ok()) {
        result.error = curl.error;
        return result;
    }
    std::unique_ptr<std::FILE, decltype(&std::fclose)> file(std::fopen(out.c_str(), "wb"),
                                                            &std::fclose);
    if (!file) {
        result.error = write_error(out, errno);
        return result;
    }
    EasyHandle handle(curl.easy_init(), curl.easy_cleanup);
    if (!handle) {
        result.error = "libcurl could not start a transfer";
        return result;
    }
    curl_slist* raw_headers = nullptr;
    if (!have.etag.empty()) {
        raw_headers = curl.slist_append(raw_headers, ("If-None-Match: " + have.etag).c_str());
    }
    if (!have.last_modified.empty()) {
        raw_headers =
            curl.slist_append(raw_headers, ("If-Modified-Since: " + have.last_modified).c_str());
    }
    const HeaderList headers(raw_headers, curl.slist_free_all);
    Transfer t;
    t.file = file.get();
    t.cancel = options.cancel;
    t.max_bytes = options.max_bytes;
    std::array<char, CURL_ERROR_SIZE> message{};
    curl.easy_setopt(handle.get(), CURLOPT_ERRORBUFFER, message.data());
    set_options(curl, handle.get(), url, options, t, headers.get());

    const CURLcode rc = curl.easy_perform(handle.get());
    curl.easy_getinfo(handle.get(), CURLINFO_RESPONSE_CODE, &result.http_status);
    if (std::fflush(file.get()) != 0 && t.write_errno == 0) {
        t.write_errno = errno != 0 ? errno : EIO;
    }
    result.bytes = t.digest.bytes();
    result.content_hash = t.digest.hash();
    if (t.too_big || rc == CURLE_FILESIZE_EXCEEDED) {
        result.error = "larger than lists.max_size (" + size_text(options.max_bytes) + ")";
    } else if (rc == CURLE_ABORTED_BY_CALLBACK) {
        result.error = "abandoned (shutting down)";
    } else if (t.write_errno != 0) {
        result.error = write_error(out, t.write_errno);
    } else if (rc != CURLE_OK) {
        result.error = message[0] != '\0' ? std::string(message.data()) : curl.easy_strerror(rc);
    } else if (result.http_status == 304) {
        result.kind = FetchKind::not_modified;
    } else if (result.http_status != 200) {
        result.error = "HTTP " + std::to_string(result.http_status);
    } else {
        result.kind = FetchKind::downloaded;
        result.validators = t.validators;
    }
    return result;
}

}  // namespace moat::lists
