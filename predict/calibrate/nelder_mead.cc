// Nelder and Mead (1965), with the ordering and shrink step of Lagarias et al. (1998).
#include "predict/calibrate/nelder_mead.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kvsweep::predict {
namespace {

struct Vertex {
  std::vector<double> x;
  double f = 0;
};

// a + t * (b - a)
std::vector<double> along(const std::vector<double>& a, const std::vector<double>& b, double t) {
  std::vector<double> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] + t * (b[i] - a[i]);
  return out;
}

}  // namespace

NelderMeadResult nelder_mead(const std::function<double(const std::vector<double>&)>& f,
                             const std::vector<double>& start, const NelderMeadOptions& options) {
  if (start.empty()) throw std::invalid_argument("nelder_mead: no coefficient to fit");
  const std::size_t n = start.size();
  int evaluations = 0;
  auto eval = [&](const std::vector<double>& x) {
    ++evaluations;
    return f(x);
  };
  std::vector<Vertex> simplex;
  simplex.push_back({start, eval(start)});
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> x = start;
    x[i] += options.initial_step;
    simplex.push_back({x, eval(x)});
  }
  bool converged = false;
  while (evaluations < options.max_evaluations) {
    std::sort(simplex.begin(), simplex.end(),
              [](const Vertex& a, const Vertex& b) { return a.f < b.f; });
    double spread = 0;
    for (const auto& v : simplex) {
      for (std::size_t i = 0; i < n; ++i) {
        spread = std::max(spread, std::abs(v.x[i] - simplex.front().x[i]));
      }
    }
    if (simplex.back().f - simplex.front().f <= options.f_tolerance &&
        spread <= options.x_tolerance) {
      converged = true;
      break;
    }
    std::vector<double> centroid(n, 0.0);
    for (std::size_t v = 0; v < n; ++v) {
      for (std::size_t i = 0; i < n; ++i) centroid[i] += simplex[v].x[i] / static_cast<double>(n);
    }
    Vertex& worst = simplex.back();
    const std::vector<double> reflected = along(centroid, worst.x, -1.0);
    const double f_reflected = eval(reflected);
    if (f_reflected < simplex.front().f) {
      const std::vector<double> expanded = along(centroid, worst.x, -2.0);
      const double f_expanded = eval(expanded);
      worst =
          f_expanded < f_reflected ? Vertex{expanded, f_expanded} : Vertex{reflected, f_reflected};
      continue;
    }
    if (f_reflected < simplex[n - 1].f) {
      worst = {reflected, f_reflected};
      continue;
    }
    // Contract towards the better of the worst point and its reflection.
    const bool outside = f_reflected < worst.f;
    const std::vector<double> contracted =
        outside ? along(centroid, worst.x, -0.5) : along(centroid, worst.x, 0.5);
    const double f_contracted = eval(contracted);
    if (f_contracted < (outside ? f_reflected : worst.f)) {
      worst = {contracted, f_contracted};
      continue;
    }
    for (std::size_t v = 1; v <= n; ++v) {
      simplex[v].x = along(simplex.front().x, simplex[v].x, 0.5);
      simplex[v].f = eval(simplex[v].x);
    }
  }
  const auto best = std::min_element(simplex.begin(), simplex.end(),
                                     [](const Vertex& a, const Vertex& b) { return a.f < b.f; });
  return {best->x, best->f, evaluations, converged};
}

}  // namespace kvsweep::predict
