package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// Part 5: many clusters in one apply. The real CLI applies and
// destroys N one-bundle clusters declared with count = N, against the apply
// and destroy of one, interleaved in one run; the provider runs each wave of
// concurrent writes as one Ray job (driver.Batcher).

// WavesTarget is the bound on the apply (and destroy) of up to
// wavesTargetMax clusters (Terraform's default -parallelism runs 10 at a
// time), or of more when Terraform runs them all at once, against one.
const (
	WavesTarget    = 2.0
	wavesTargetMax = 12
)

// jobSubmitRoute is how the counting proxy names a job submission.
var jobSubmitRoute = Route("POST", "/api/jobs/")

// WavesConfig configures RunWaves.
type WavesConfig struct {
	CLI     string // terraform or tofu
	Dir     string // workspace root (provider build, configurations)
	Address string // Ray dashboard
	Client  *rayclient.Client
	// Sizes are the cluster counts; Parallel the counts also applied with
	// -parallelism equal to the count (Terraform's default is 10).
	Sizes, Parallel []int
	Reps            int
	Prefix          string
	Log             io.Writer
}

// WavesRow is one cluster count's measurements.
type WavesRow struct {
	Clusters, Parallelism int
	Apply, Destroy        []time.Duration
	// Jobs submitted per apply and destroy (medians), and the provider's
	// job records Ray still listed when the command returned (maximum).
	ApplyJobs, DestroyJobs []int
	LeftApply, LeftDestroy int
}

// wavesHCL declares n one-bundle CPU clusters on disjoint port ranges.
func wavesHCL(address, name string, n int) string {
	return ProviderHCL(address) + fmt.Sprintf(`
resource "ray_virtual_cluster" "c" {
  count                   = %d
  name                    = "%s-${count.index}"
  bundle_ct_per_node_list = [1]
  use_gpus                = false
  port_range_low          = 3000 + count.index * 10
  port_range_high         = 3010 + count.index * 10
}
`, n, name)
}

// RunWaves measures apply and destroy of each size, sizes interleaved per
// repetition so that load drifts hit them alike.
func RunWaves(ctx context.Context, cfg WavesConfig) ([]*WavesRow, error) {
	logf := logTo(cfg.Log)
	ws, proxy, _, err := proxiedWorkspace(ctx, cfg.CLI, cfg.Dir, cfg.Address)
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	var rows []*WavesRow
	for _, n := range cfg.Sizes {
		rows = append(rows, &WavesRow{Clusters: n, Parallelism: min(n, terraformParallelism)})
	}
	for _, n := range cfg.Parallel {
		rows = append(rows, &WavesRow{Clusters: n, Parallelism: n})
	}
	for rep := range cfg.Reps {
		for _, row := range rows {
			if ctx.Err() != nil {
				return rows, ctx.Err()
			}
			if err := row.measure(ctx, ws, proxy, cfg, rep); err != nil {
				return rows, err
			}
			logf("   waves: %d clusters (-parallelism=%d) rep %d: apply %s, destroy %s", row.Clusters, row.Parallelism, rep+1,
				Sec(row.Apply[len(row.Apply)-1]), Sec(row.Destroy[len(row.Destroy)-1]))
		}
	}
	return rows, nil
}

func (row *WavesRow) measure(ctx context.Context, ws *Workspace, proxy *CountingProxy, cfg WavesConfig, rep int) error {
	name := fmt.Sprintf("%s-w%dp%d", cfg.Prefix, row.Clusters, row.Parallelism)
	dir, err := ws.Dir(fmt.Sprintf("waves-%d-%d", row.Clusters, row.Parallelism),
		map[string]string{"main.tf": wavesHCL(proxy.URL, name, row.Clusters)})
	if err != nil {
		return err
	}
	parallelism := fmt.Sprintf("-parallelism=%d", row.Parallelism)
	run := func(cmd string) (time.Duration, int, error) {
		proxy.Take()
		wall, code, out, err := ws.Run(context.WithoutCancel(ctx), dir, cmd, "-auto-approve", "-no-color", parallelism)
		jobs := CountRoute(proxy.Take(), jobSubmitRoute)
		if err == nil && code != 0 {
			err = fmt.Errorf("%s of %d clusters (rep %d) exited %d:\n%s", cmd, row.Clusters, rep+1, code, tail(out, 30))
		}
		return wall, jobs, err
	}
	wall, jobs, err := run("apply")
	if err != nil {
		_, _, _ = run("destroy")
		return err
	}
	row.Apply, row.ApplyJobs = append(row.Apply, wall), append(row.ApplyJobs, jobs)
	row.LeftApply = max(row.LeftApply, jobRecordsOf(ctx, cfg.Client, name))
	wall, jobs, err = run("destroy")
	if err != nil {
		return err
	}
	row.Destroy, row.DestroyJobs = append(row.Destroy, wall), append(row.DestroyJobs, jobs)
	row.LeftDestroy = max(row.LeftDestroy, jobRecordsOf(ctx, cfg.Client, name))
	return nil
}

// jobRecordsOf counts the provider's job records Ray lists for clusters
// named name-*.
func jobRecordsOf(ctx context.Context, c *rayclient.Client, name string) int {
	jobs, err := c.ListJobs(ctx)
	if err != nil {
		return -1
	}
	n := 0
	for _, j := range jobs {
		if strings.HasPrefix(j.SubmissionID, "raytf_") && strings.Contains(j.SubmissionID, name) {
			n++
		}
	}
	return n
}

// PrintWaves prints the table, each row against the one-cluster apply and
// destroy, with the target where Terraform runs every cluster at once.
func PrintWaves(out io.Writer, rows []*WavesRow) {
	if len(rows) == 0 {
		return
	}
	base := rows[0]
	fmt.Fprintf(out, "`apply` and `destroy` of N one-bundle clusters (`count = N`) with the real CLI, against N = 1 in the same run, "+
		"sizes interleaved; medians of %d repetitions, seconds. Jobs = Ray jobs the provider submitted; records left = its job "+
		"records Ray still listed when the command returned (most of any repetition).\n\n", len(base.Apply))
	t := NewTable(out, "clusters", "-parallelism", "apply", "apply / 1", "destroy", "destroy / 1", "jobs (apply, destroy)",
		"records left (apply, destroy)", "target", "met")
	for _, r := range rows {
		ratioA := Median(r.Apply).Seconds() / Median(base.Apply).Seconds()
		ratioD := Median(r.Destroy).Seconds() / Median(base.Destroy).Seconds()
		target, met := "-", "-"
		if r.Clusters > 1 && (r.Clusters <= wavesTargetMax || r.Parallelism >= r.Clusters) {
			target = fmt.Sprintf("<= %.0fx", WavesTarget)
			met = "met"
			if ratioA > WavesTarget || ratioD > WavesTarget {
				met = "not met"
			}
		}
		t.Row(fmt.Sprint(r.Clusters), fmt.Sprint(r.Parallelism), Sec(Median(r.Apply)), fmt.Sprintf("%.2fx", ratioA),
			Sec(Median(r.Destroy)), fmt.Sprintf("%.2fx", ratioD),
			fmt.Sprintf("%d, %d", medianInt(r.ApplyJobs), medianInt(r.DestroyJobs)),
			fmt.Sprintf("%d, %d", r.LeftApply, r.LeftDestroy), target, met)
	}
	t.Flush()
	fmt.Fprintln(out)
}
