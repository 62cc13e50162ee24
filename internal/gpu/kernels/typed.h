// typed.h is the kernels of one element type: all.h includes it
// once with REAL = float and K(name) = name_f32, once with double and
// name_f64. Sums are accumulated in double, as the CPU ops do, so the two
// devices agree to rounding. Each kernel's comment gives the CPU code it
// mirrors; the Go tests (package gpu/gputest) check it against a plain
// reference.

// fill sets x[i] = v.
extern "C" __global__ void K(fill)(REAL *x, double v, int n, struct lanes ln)
{
	LANE(ln, x);
	FOR(i, n) { x[i] = (REAL)v; }
}

// axpy is y += a·x.
extern "C" __global__ void K(axpy)(REAL *y, double a, const REAL *x, int n, struct lanes ln)
{
	LANE(ln, y, x);
	FOR(i, n) { y[i] = (REAL)((double)y[i] + a * (double)x[i]); }
}

// scale is x = a·x.
extern "C" __global__ void K(scale)(REAL *x, double a, int n, struct lanes ln)
{
	LANE(ln, x);
	FOR(i, n) { x[i] = (REAL)(a * (double)x[i]); }
}

// copy is y = x.
extern "C" __global__ void K(copy)(REAL *y, const REAL *x, int n, struct lanes ln)
{
	LANE(ln, y, x);
	FOR(i, n) { y[i] = x[i]; }
}

// add is y = a + b: Gorgonia's sum of a node's gradient contributions,
// which reaches the device through its tensor engine (models/ops).
extern "C" __global__ void K(add)(REAL *y, const REAL *a, const REAL *b, int n, struct lanes ln)
{
	LANE(ln, y, a, b);
	FOR(i, n) { y[i] = a[i] + b[i]; }
}

// swap01 swaps the first two axes of src (a, b, inner) into dst (b, a,
// inner): a convolution's product (O, batch, positions) into its output
// (batch, O, positions), adding bias[j] to channel j's values if bias is
// given (the convolution's bias, in the same launch), and the output's
// gradient the other way, without bias (models/ops convForward,
// toChannelMajor).
extern "C" __global__ void K(swap01)(REAL *dst, const REAL *src, const REAL *bias, int a, int b, int inner,
				 struct lanes ln)
{
	LANE(ln, dst, src, bias);
	FOR(i, (long long)a * b * inner)
	{
		long long p = i % inner, j = (i / inner) % a, k = i / ((long long)inner * a);
		REAL v = src[(j * b + k) * inner + p];
		dst[i] = bias ? v + bias[j] : v;
	}
}

// gather_rows is row r of dst (rows×width) = scale·(row idx[r] of src),
// or zeros where idx[r] < 0: a batch taken from a data set held in device
// memory by its examples' indices, the rows past the batch's examples
// (idx −1) its padding (engine Inputs.Load lays out the same values).
extern "C" __global__ void K(gather_rows)(REAL *dst, const REAL *src, const int *idx, int rows, int width,
					  double scale, struct lanes ln)
{
	LANE(ln, dst, src, idx);
	FOR(i, (long long)rows * width)
	{
		long long r = i / width, c = i % width;
		int j = idx[r];
		dst[i] = j < 0 ? (REAL)0 : (REAL)(scale * (double)src[(long long)j * width + c]);
	}
}

// widen copies x into the doubles d (the particle algebra's precision).
extern "C" __global__ void K(widen)(double *d, const REAL *x, int n, struct lanes ln)
{
	LANE(ln, d, x);
	FOR(i, n) { d[i] = (double)x[i]; }
}

// narrow copies the doubles d into x.
extern "C" __global__ void K(narrow)(REAL *x, const double *d, int n, struct lanes ln)
{
	LANE(ln, x, d);
	FOR(i, n) { x[i] = (REAL)d[i]; }
}

// relu is y = max(0, x) (models/ops ReLU).
extern "C" __global__ void K(relu)(REAL *y, const REAL *x, int n, struct lanes ln)
{
	LANE(ln, y, x);
	FOR(i, n) { y[i] = x[i] > 0 ? x[i] : (REAL)0; }
}

// add_relu is y = max(0, a + b) (models/ops AddReLU, a residual block's
// end).
extern "C" __global__ void K(add_relu)(REAL *y, const REAL *a, const REAL *b, int n, struct lanes ln)
{
	LANE(ln, y, a, b);
	FOR(i, n)
	{
		REAL s = a[i] + b[i];
		y[i] = s > 0 ? s : (REAL)0;
	}
}

// relu_grad is dx = dy where y > 0, else 0: the gradient of ReLU and of
// AddReLU (for both terms) given the forward output y.
extern "C" __global__ void K(relu_grad)(REAL *dx, const REAL *dy, const REAL *y, int n, struct lanes ln)
{
	LANE(ln, dx, dy, y);
	FOR(i, n) { dx[i] = y[i] > 0 ? dy[i] : (REAL)0; }
}

// bias_add adds b[ch] to y[(o·c + ch)·inner + p] for every o < outer and
// p < inner: a convolution's bias (outer = batch, inner = positions) or a
// linear layer's (inner = 1); with relu set, then takes max(0, ·) (a
// linear layer with a ReLU, in the same launch).
extern "C" __global__ void K(bias_add)(REAL *y, const REAL *b, int outer, int c, int inner, int relu,
				   struct lanes ln)
{
	LANE(ln, y, b);
	FOR(i, (long long)outer * c * inner)
	{
		int ch = (int)((i / inner) % c);
		REAL s = y[i] + b[ch];
		y[i] = relu && !(s > 0) ? (REAL)0 : s;
	}
}

// column_sums is out[j] = Σ_i x[i·cols + j] over rows i in order, summed
// in double and written as REAL: a linear layer's bias gradient (rows
// the batch), in one launch where channel_partial and sum_columns_to
// took two, with the same sums.
extern "C" __global__ void K(column_sums)(REAL *out, const REAL *x, int rows, int cols, struct lanes ln)
{
	LANE(ln, out, x);
	FOR(j, cols)
	{
		double s = 0;
		for (int i = 0; i < rows; i++)
			s += (double)x[(long long)i * cols + j];
		out[j] = (REAL)s;
	}
}

// channel_partial writes, for every example e < n and channel ch < c,
// part[e·c + ch] = scale_e · Σ_p f(x, g) over that example's inner values
// of the channel (x laid out (n, c, inner)), with scale_e = w[e]/inner if
// w is given, else 1, and by mode:
//
//	0: x                  (batch norm's weighted mean)
//	1: (x − mean)²        (its weighted variance)
//	2: g                  (Σ of an upstream gradient: ∂β, a bias's gradient)
//	3: g·(x − mean)·inv   (∂γ)
//
// sum_columns then adds the examples' partial sums in order, so the
// result does not depend on the launch.
extern "C" __global__ void K(channel_partial)(double *part, const REAL *x, const REAL *g, const REAL *w,
					  const double *mean, const double *inv, int mode, int n, int c, int inner, struct lanes ln)
{
	LANE(ln, part, x, g, w, mean, inv);
	FOR(i, (long long)n * c)
	{
		int e = (int)(i / c), ch = (int)(i % c);
		const REAL *xs = x ? x + i * inner : 0;
		const REAL *gs = g ? g + i * inner : 0;
		double s = 0;
		switch (mode) {
		case 0:
			for (int p = 0; p < inner; p++)
				s += (double)xs[p];
			break;
		case 1:
			for (int p = 0; p < inner; p++) {
				double d = (double)xs[p] - mean[ch];
				s += d * d;
			}
			break;
		case 2:
			for (int p = 0; p < inner; p++)
				s += (double)gs[p];
			break;
		default:
			for (int p = 0; p < inner; p++)
				s += (double)gs[p] * ((double)xs[p] - mean[ch]) * inv[ch];
		}
		part[i] = w ? s * (double)w[e] / inner : s;
	}
}

// bn_param_partials is channel_partial's modes 2 and 3 in one pass over
// g and x (laid out (n, c, inner)), unweighted: for example e and channel
// ch, part[e·c + ch] = Σ_p g (∂β's) and part[n·c + e·c + ch] =
// Σ_p g·(x − mean)·inv (∂γ's), each summed as channel_partial sums it.
extern "C" __global__ void K(bn_param_partials)(double *part, const REAL *x, const REAL *g, const double *mean,
						const double *inv, int n, int c, int inner, struct lanes ln)
{
	LANE(ln, part, x, g, mean, inv);
	FOR(i, (long long)n * c)
	{
		int ch = (int)(i % c);
		const REAL *xs = x + i * inner, *gs = g + i * inner;
		double sb = 0, sg = 0;
		for (int p = 0; p < inner; p++) {
			sb += (double)gs[p];
			sg += (double)gs[p] * ((double)xs[p] - mean[ch]) * inv[ch];
		}
		part[i] = sb;
		part[(long long)n * c + i] = sg;
	}
}

// sum_columns_to is all.h's sum_columns, out[j] = Σ_i part[i·cols + j]
// over rows i in order, written as REAL: the second stage of a gradient's
// per-channel sums (a bias's, batch norm's ∂β and ∂γ) straight into the
// gradient, in one launch where sum_columns and narrow took two.
extern "C" __global__ void K(sum_columns_to)(REAL *out, const double *part, int rows, int cols, struct lanes ln)
{
	LANE(ln, out, part);
	FOR(j, cols)
	{
		double s = 0;
		for (int i = 0; i < rows; i++)
			s += part[(long long)i * cols + j];
		out[j] = (REAL)s;
	}
}

// sum_columns2_to is sum_columns_to of two stacked blocks of partial
// sums in one launch: a[j] = Σ_i part[i·cols + j] and b[j] =
// Σ_i part[(rows + i)·cols + j], over rows i in order: a batch norm's ∂β
// and ∂γ from bn_param_partials', as two sum_columns_to launches would.
extern "C" __global__ void K(sum_columns2_to)(REAL *a, REAL *b, const double *part, int rows, int cols,
					  struct lanes ln)
{
	LANE(ln, a, b, part);
	FOR(t, 2LL * cols)
	{
		int j = (int)(t % cols), second = (int)(t / cols);
		const double *p = part + (long long)second * rows * cols;
		double s = 0;
		for (int i = 0; i < rows; i++)
			s += p[(long long)i * cols + j];
		(second ? b : a)[j] = (REAL)s;
	}
}

// sum_rows_to is sum_columns_to along the other axis, out[i] =
// Σ_j part[i·cols + j] over columns j in order, written as REAL: the
// second stage of a sum over long rows (a convolution's bias gradient),
// whose first stage channel_partial splits each row into cols chunks
// summed at once, rather than one thread walking each whole row.
extern "C" __global__ void K(sum_rows_to)(REAL *out, const double *part, int rows, int cols, struct lanes ln)
{
	LANE(ln, out, part);
	FOR(i, rows)
	{
		double s = 0;
		for (int j = 0; j < cols; j++)
			s += part[(long long)i * cols + j];
		out[i] = (REAL)s;
	}
}

// bn_forward is batch normalisation's output y = x·k + d per channel, with
// k = γ·inv and d = β − mean·k (models/ops bnForward), given the batch's
// mean and inv = 1/sqrt(variance + ε).
extern "C" __global__ void K(bn_forward)(REAL *y, const REAL *x, const REAL *gamma, const REAL *beta,
				     const double *mean, const double *inv, int n, int c, int inner, struct lanes ln)
{
	LANE(ln, y, x, gamma, beta, mean, inv);
	FOR(i, (long long)n * c * inner)
	{
		int ch = (int)((i / inner) % c);
		double k = (double)gamma[ch] * inv[ch];
		double d = (double)beta[ch] - mean[ch] * k;
		y[i] = (REAL)((double)x[i] * k + d);
	}
}

// bn_grad_input is ∂L/∂x = inv·γ·(g − a·(∂β + x̂·∂γ)) with a = w[e]/inner
// and x̂ = (x − mean)·inv (models/ops bnInputGrad).
extern "C" __global__ void K(bn_grad_input)(REAL *dx, const REAL *x, const REAL *g, const REAL *gamma,
					const REAL *w, const double *mean, const double *inv, const REAL *dgamma,
					const REAL *dbeta, int n, int c, int inner, struct lanes ln)
{
	LANE(ln, dx, x, g, gamma, w, mean, inv, dgamma, dbeta);
	FOR(i, (long long)n * c * inner)
	{
		int ch = (int)((i / inner) % c);
		int e = (int)(i / ((long long)c * inner));
		double a = (double)w[e] / inner;
		double xh = ((double)x[i] - mean[ch]) * inv[ch];
		dx[i] = (REAL)(inv[ch] * (double)gamma[ch] * ((double)g[i] - a * ((double)dbeta[ch] + xh * (double)dgamma[ch])));
	}
}

// im2col writes the patches of x (n, c, h, w) as the columns of cols
// (c·k·k rows, n·oh·ow columns): row (ch, i, j), column e·oh·ow + output
// position; taps in the padding are 0 (models/ops im2col).
extern "C" __global__ void K(im2col)(REAL *cols, const REAL *x, struct geom g, struct lanes ln)
{
	LANE(ln, cols, x);
	long long p = (long long)g.oh * g.ow, ld = g.n * p;
	FOR(i, (long long)g.c * g.k * g.k * ld)
	{
		long long row = i / ld, col = i % ld;
		int j = (int)(row % g.k), ii = (int)((row / g.k) % g.k), ch = (int)(row / ((long long)g.k * g.k));
		int e = (int)(col / p), pos = (int)(col % p);
		int y = (pos / g.ow) * g.stride - g.pad + ii, xx = (pos % g.ow) * g.stride - g.pad + j;
		REAL v = 0;
		if (y >= 0 && y < g.h && xx >= 0 && xx < g.w)
			v = x[(((long long)e * g.c + ch) * g.h + y) * g.w + xx];
		cols[i] = v;
	}
}

// col2im is im2col's adjoint: dx[e, ch, y, x] is the sum of the column
// entries of every tap that reads that pixel (models/ops col2im). Each
// thread gathers one pixel's taps, so no two threads write one place.
extern "C" __global__ void K(col2im)(REAL *dx, const REAL *cols, struct geom g, struct lanes ln)
{
	LANE(ln, dx, cols);
	long long p = (long long)g.oh * g.ow, ld = g.n * p;
	FOR(i, (long long)g.n * g.c * g.h * g.w)
	{
		int xx = (int)(i % g.w), y = (int)((i / g.w) % g.h);
		int ch = (int)((i / ((long long)g.w * g.h)) % g.c), e = (int)(i / ((long long)g.w * g.h * g.c));
		double s = 0;
		for (int ii = 0; ii < g.k; ii++) {
			int oy = y + g.pad - ii;
			if (oy < 0 || oy % g.stride != 0 || oy / g.stride >= g.oh)
				continue;
			oy /= g.stride;
			for (int j = 0; j < g.k; j++) {
				int ox = xx + g.pad - j;
				if (ox < 0 || ox % g.stride != 0 || ox / g.stride >= g.ow)
					continue;
				ox /= g.stride;
				long long row = ((long long)ch * g.k + ii) * g.k + j;
				s += (double)cols[row * ld + e * p + (long long)oy * g.ow + ox];
			}
		}
		dx[i] = (REAL)s;
	}
}

// relu_maxpool is max(0, window maximum) over k×k windows (g.n·g.c
// planes), with argmax the index within the plane of the window's first
// positive maximum, −1 where the output is 0 (models/ops poolForward).
extern "C" __global__ void K(relu_maxpool)(REAL *y, int *argmax, const REAL *x, struct geom g, struct lanes ln)
{
	LANE(ln, y, argmax, x);
	long long p = (long long)g.oh * g.ow;
	FOR(i, (long long)g.n * g.c * p)
	{
		long long plane = i / p;
		int pos = (int)(i % p), oy = pos / g.ow, ox = pos % g.ow;
		int y0 = oy * g.stride - g.pad, x0 = ox * g.stride - g.pad;
		const REAL *in = x + plane * g.h * g.w;
		REAL best = 0;
		int at = -1;
		for (int r = y0 < 0 ? 0 : y0; r < y0 + g.k && r < g.h; r++)
			for (int q = x0 < 0 ? 0 : x0; q < x0 + g.k && q < g.w; q++)
				if (in[r * g.w + q] > best) {
					best = in[r * g.w + q];
					at = r * g.w + q;
				}
		y[i] = best;
		argmax[i] = at;
	}
}

// maxpool_grad sends each output's gradient to its argmax: each thread
// gathers, for one input pixel, the gradients of the windows that chose it
// (models/ops poolBackward), visiting only the windows that hold the
// pixel, in row-major order: those of rows oy with oy·stride − pad ≤ y <
// oy·stride − pad + k, and the same of columns.
extern "C" __global__ void K(maxpool_grad)(REAL *dx, const REAL *dy, const int *argmax, struct geom g, struct lanes ln)
{
	LANE(ln, dx, dy, argmax);
	long long hw = (long long)g.h * g.w, p = (long long)g.oh * g.ow;
	FOR(i, (long long)g.n * g.c * hw)
	{
		long long plane = i / hw;
		int at = (int)(i % hw), y = at / g.w, xx = at % g.w;
		int ylo = y + g.pad - g.k + 1, xlo = xx + g.pad - g.k + 1;
		int oy0 = ylo <= 0 ? 0 : (ylo + g.stride - 1) / g.stride;
		int ox0 = xlo <= 0 ? 0 : (xlo + g.stride - 1) / g.stride;
		int oy1 = (y + g.pad) / g.stride, ox1 = (xx + g.pad) / g.stride;
		oy1 = oy1 < g.oh - 1 ? oy1 : g.oh - 1;
		ox1 = ox1 < g.ow - 1 ? ox1 : g.ow - 1;
		double s = 0;
		for (int oy = oy0; oy <= oy1; oy++) {
			int y0 = oy * g.stride - g.pad;
			if (y < y0 || y >= y0 + g.k)
				continue;
			for (int ox = ox0; ox <= ox1; ox++) {
				int x0 = ox * g.stride - g.pad;
				if (xx < x0 || xx >= x0 + g.k)
					continue;
				long long o = plane * p + (long long)oy * g.ow + ox;
				if (argmax[o] == at)
					s += (double)dy[o];
			}
		}
		dx[i] = (REAL)s;
	}
}

// avgpool is the mean of each of the planes (inner values each): ResNet's
// global average pooling.
extern "C" __global__ void K(avgpool)(REAL *y, const REAL *x, int planes, int inner, struct lanes ln)
{
	LANE(ln, y, x);
	FOR(i, planes)
	{
		double s = 0;
		for (int p = 0; p < inner; p++)
			s += (double)x[i * inner + p];
		y[i] = (REAL)(s / inner);
	}
}

// avgpool_grad spreads each plane's gradient evenly over its inputs.
extern "C" __global__ void K(avgpool_grad)(REAL *dx, const REAL *dy, int planes, int inner, struct lanes ln)
{
	LANE(ln, dx, dy);
	FOR(i, (long long)planes * inner) { dx[i] = (REAL)((double)dy[i / inner] / inner); }
}

// xent_rows is the softmax cross-entropy of each row of the logits z (n
// rows of c) against the soft targets y: sm gets each row's softmax and
// rowloss[r] = w[r]·(logsumexp·Σy − Σ y·z), summed by sum_columns
// (models/ops xentForward).
extern "C" __global__ void K(xent_rows)(REAL *sm, double *rowloss, const REAL *z, const REAL *y, const REAL *w, int n, int c, struct lanes ln)
{
	LANE(ln, sm, rowloss, z, y, w);
	FOR(r, n)
	{
		const REAL *row = z + r * c, *t = y + r * c;
		REAL *p = sm + r * c;
		double m = (double)row[0];
		for (int k = 1; k < c; k++)
			m = (double)row[k] > m ? (double)row[k] : m;
		double sum = 0;
		for (int k = 0; k < c; k++)
			sum += exp((double)row[k] - m);
		double picked = 0, mass = 0;
		for (int k = 0; k < c; k++) {
			p[k] = (REAL)(exp((double)row[k] - m) / sum);
			picked += (double)t[k] * (double)row[k];
			mass += (double)t[k];
		}
		rowloss[r] = (double)w[r] * ((m + log(sum)) * mass - picked);
	}
}

// xent_grad is ∂L/∂z = up·w[r]·(sm·Σy − y) for the upstream gradient up
// (models/ops xentBackward).
extern "C" __global__ void K(xent_grad)(REAL *dz, const REAL *sm, const REAL *y, const REAL *w, double up, int n, int c, struct lanes ln)
{
	LANE(ln, dz, sm, y, w);
	FOR(i, (long long)n * c)
	{
		long long r = i / c;
		double mass = 0;
		for (int k = 0; k < c; k++)
			mass += (double)y[r * c + k];
		dz[i] = (REAL)(up * (double)w[r] * ((double)sm[i] * mass - (double)y[i]));
	}
}

// sqerr_rows is w[r]·(pred[r] − y[r])², summed by sum_columns: the
// weighted squared error of a regression task.
extern "C" __global__ void K(sqerr_rows)(double *rowloss, const REAL *pred, const REAL *y, const REAL *w, int n, struct lanes ln)
{
	LANE(ln, rowloss, pred, y, w);
	FOR(r, n)
	{
		double d = (double)pred[r] - (double)y[r];
		rowloss[r] = (double)w[r] * d * d;
	}
}

// sqerr_grad is ∂L/∂pred = up·2·w[r]·(pred[r] − y[r]).
extern "C" __global__ void K(sqerr_grad)(REAL *dpred, const REAL *pred, const REAL *y, const REAL *w, double up, int n, struct lanes ln)
{
	LANE(ln, dpred, pred, y, w);
	FOR(r, n) { dpred[r] = (REAL)(up * 2 * (double)w[r] * ((double)pred[r] - (double)y[r])); }
}

// sgd is one step of SGD with momentum μ as package optim's SGD: b ← μ·b
// + g (b = g when first is set), x ← x − lr·b; with μ = 0 the buffer is
// not used.
extern "C" __global__ void K(sgd)(REAL *x, REAL *b, const REAL *g, double lr, double mu, int first, int n, struct lanes ln)
{
	LANE(ln, x, b, g);
	FOR(i, n)
	{
		if (mu == 0) {
			x[i] = (REAL)((double)x[i] - lr * (double)g[i]);
			continue;
		}
		double v = first ? (double)g[i] : mu * (double)b[i] + (double)g[i];
		b[i] = (REAL)v;
		x[i] = (REAL)((double)x[i] - lr * v);
	}
}

// adam is one step of package optim's Adam with the bias corrections
// c1 = 1 − β1ᵗ and c2 = 1 − β2ᵗ of step t.
extern "C" __global__ void K(adam)(REAL *x, REAL *m, REAL *v, const REAL *g, double lr, double b1, double b2,
				double eps, double c1, double c2, int n, struct lanes ln)
{
	LANE(ln, x, m, v, g);
	FOR(i, n)
	{
		double gi = (double)g[i];
		double mi = b1 * (double)m[i] + (1 - b1) * gi;
		double vi = b2 * (double)v[i] + (1 - b2) * gi * gi;
		m[i] = (REAL)mi;
		v[i] = (REAL)vi;
		x[i] = (REAL)((double)x[i] - lr * (mi / c1) / (sqrt(vi / c2) + eps));
	}
}
