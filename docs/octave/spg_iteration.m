% spg_iteration.m: the smoothing proximal gradient method (SPG) of Chen et
% al. for the graph-guided fused LASSO, written from its definition, to time
% one iteration in GNU Octave on the instance that fwlab's spg solves.
%
% Input (in the current directory): X.txt (N×J), Y.txt (N×K), E.txt (one
% edge a line: m l w sign, 1-based tasks) and params.txt (lambda gamma mu L),
% as fwlab writes them for its spg on the ten-times GFLASSO instance:
%   FWLAB_OCTAVE_DIR=/tmp/spg go test -count=1 -run TestWriteOctaveInput ./internal/problems/gflasso
% (that test also checks that these steps, run from the files, give spg's F).
% Run: octave-cli --no-gui -q spg_iteration.m (1000 warm-up iterations, then
% 1000 timed; octave-cli --eval 'warm=5; iters=5; source("spg_iteration.m")'
% to change them).
%
% Per iteration, as in the method: the gradient XᵀX·W − XᵀY of the loss
% (XᵀX and XᵀY precomputed), the gradient AᵀC of the smoothed fusion term
% (A = clip(C·Wᵀ/μ, −1, 1), C the |E|×K edge matrix with C_em = γw_e,
% C_el = −γ s_e w_e), the soft-threshold step for λ‖B‖₁ with step 1/L and
% FISTA's momentum θ_t = 2/(t+2); no objective per iteration. C is kept
% dense: with sparse(C) an iteration takes longer here.
X = load('X.txt'); Y = load('Y.txt'); E = load('E.txt'); P = load('params.txt');
lambda = P(1); gamma = P(2); mu = P(3); L = P(4);
[N, J] = size(X); K = size(Y, 2); ne = size(E, 1);
C = zeros(ne, K);
for e = 1:ne
  C(e, E(e, 1)) = gamma * E(e, 3);
  C(e, E(e, 2)) = -gamma * E(e, 4) * E(e, 3);
end
XX = X' * X; XY = X' * Y;
if ~exist('warm', 'var'), warm = 1000; end
if ~exist('iters', 'var'), iters = 1000; end
B = zeros(J, K); W = B; theta = 1;
for it = 1:warm + iters
  if it == warm + 1
    t0 = tic; c0 = cputime;
  end
  A = min(1, max(-1, (C * W') / mu));
  G = XX * W - XY + A' * C;
  V = W - G / L;
  Bn = sign(V) .* max(0, abs(V) - lambda / L);
  thn = 2 / (it + 2);
  W = Bn + ((1 - theta) / theta * thn) * (Bn - B);
  B = Bn; theta = thn;
end
t_iter = toc(t0) / iters; c_iter = (cputime - c0) / iters;
% The same J×J by J×K product alone.
t0 = tic; c0 = cputime;
for i = 1:iters
  G = XX * W;
end
t_prod = toc(t0) / iters; c_prod = (cputime - c0) / iters;
% F(B) after warm + iters iterations, to check the trajectory against fwlab's.
D = B * C';
F = 0.5 * norm(Y - X * B, 'fro')^2 + lambda * sum(abs(B(:))) + sum(abs(D(:)));
printf('N=%d J=%d K=%d edges=%d\n', N, J, K, ne);
printf('spg iteration: %.3f ms wall, %.3f ms cpu\n', 1e3 * t_iter, 1e3 * c_iter);
printf('XtX*W product: %.3f ms wall, %.3f ms cpu\n', 1e3 * t_prod, 1e3 * c_prod);
printf('F after %d iterations: %.12g\n', warm + iters, F);
