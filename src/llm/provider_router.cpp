// A client per provider in use, and the one that answers each request: the provider a loop
// role's calls go to is Config::provider_for (loops.<type>.provider), chosen by the engine
// into Request::provider; this only carries it out.
#include <algorithm>
#include <map>

#include <loopr/llm/client.hpp>

#include "llm/providers.hpp"

namespace loopr::llm {

std::vector<std::string> providers_in_use(const Config& config) {
  std::vector<std::string> out = {config.llm.provider};
  for (const char* role : {"plan", "spec", "phase", "code", "integration-fix", "review"}) {
    std::string p = config.provider_for(role);
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

namespace {

class ProviderRouter final : public LlmClient {
 public:
  ProviderRouter(std::string first, std::map<std::string, std::unique_ptr<LlmClient>> clients)
      : first_(std::move(first)), clients_(std::move(clients)) {}

  awaitable<Outcome> complete(const Request& request) override {
    LlmClient& client = pick(request.provider);
    Outcome out = co_await client.complete(request);
    co_return out;
  }
  bool runs_own_tools() const override { return clients_.at(first_)->runs_own_tools(); }
  const std::string& provider() const override { return first_; }
  const std::string& model() const override { return clients_.at(first_)->model(); }
  const LlmClient& for_provider(std::string_view provider) const override {
    return const_cast<ProviderRouter*>(this)->pick(provider);
  }

 private:
  LlmClient& pick(std::string_view provider) {
    auto it = clients_.find(std::string(provider));
    return it == clients_.end() ? *clients_.at(first_) : *it->second;
  }

  std::string first_;
  std::map<std::string, std::unique_ptr<LlmClient>> clients_;
};

}  // namespace

std::unique_ptr<LlmClient> make_provider_router(
    std::string first, std::map<std::string, std::unique_ptr<LlmClient>> clients) {
  return std::make_unique<ProviderRouter>(std::move(first), std::move(clients));
}

}  // namespace loopr::llm
