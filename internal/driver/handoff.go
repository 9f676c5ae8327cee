package driver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// HandOffArg is the provider binary's argument that makes it finish the
// job-record clean-up a provider process handed off (FinishHandedOff).
const HandOffArg = "finish-job-cleanup"

// handOffTiming is the hand-off process's timing (tests shorten it).
var handOffTiming = DefaultRunTiming()

// handOffBound bounds a hand-off process: Ray's monitor settles a job's
// record within seconds, and a record written back later still has a
// later Run to delete it (orphanAge).
const handOffBound = 30 * time.Second

// unfinished holds the job records this process still has to delete or
// check again. Terraform ends a provider process about as soon as its last
// command returns, while a record can be deleted only once Ray's monitor
// has settled the job (about 1.5 s after its end, and it may write the
// record back once within seconds): the last command's record would stay.
var unfinished = struct {
	sync.Mutex
	ids map[string]*rayclient.Client
}{ids: map[string]*rayclient.Client{}}

// trackRecord notes that job id's record still has to go; the returned
// func says it has. Only records of a real dashboard client are tracked.
func trackRecord(api JobAPI, id string) (done func()) {
	c, ok := api.(*rayclient.Client)
	if !ok {
		return func() {}
	}
	unfinished.Lock()
	unfinished.ids[id] = c
	unfinished.Unlock()
	return func() { untrackRecord(id) }
}

// untrackRecord drops id from the records to hand off.
func untrackRecord(id string) {
	unfinished.Lock()
	delete(unfinished.ids, id)
	unfinished.Unlock()
}

// handOff is what the hand-off process reads on its standard input.
type handOff struct {
	Address            string            `json:"address"`
	Token              string            `json:"token,omitempty"`
	Headers            map[string]string `json:"headers,omitempty"`
	CAFile             string            `json:"ca_file,omitempty"`
	CAPEM              string            `json:"ca_pem,omitempty"`
	InsecureSkipVerify bool              `json:"insecure_skip_verify,omitempty"`
	IDs                []string          `json:"ids"`
}

// pendingHandOffs groups the unfinished records by dashboard client.
func pendingHandOffs() []handOff {
	unfinished.Lock()
	defer unfinished.Unlock()
	byClient := map[*rayclient.Client][]string{}
	for id, c := range unfinished.ids {
		byClient[c] = append(byClient[c], id)
	}
	out := make([]handOff, 0, len(byClient))
	for c, ids := range byClient {
		cfg := c.HandOffConfig()
		sort.Strings(ids)
		out = append(out, handOff{Address: cfg.Address, Token: cfg.Token, Headers: cfg.Headers, CAFile: cfg.CAFile,
			CAPEM: cfg.CAPEM, InsecureSkipVerify: cfg.InsecureSkipVerify, IDs: ids})
	}
	return out
}

// HandOffCleanups starts, for the records this process could not finish
// deleting, a detached process of the provider binary exe that finishes
// it (at most handOffBound) after this one exits. Credentials go through a
// pipe, never the command line. It starts nothing when all is done.
func HandOffCleanups(exe string) error {
	var errs []error
	for _, h := range pendingHandOffs() {
		payload, err := json.Marshal(h)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cmd := exec.Command(exe, HandOffArg)
		cmd.SysProcAttr = detachedProcess() // outlives the CLI's process group
		stdin, err := cmd.StdinPipe()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// No stdout or stderr: the CLI reads the plugin's until they close.
		if err := cmd.Start(); err != nil {
			errs = append(errs, err)
			continue
		}
		_, werr := stdin.Write(payload)
		errs = append(errs, werr, stdin.Close(), cmd.Process.Release())
	}
	return errors.Join(errs...)
}

// FinishHandedOff deletes the job records a provider process handed off
// (read from r), each once Ray has settled it and once more after Ray may
// have written it back.
func FinishHandedOff(r io.Reader) error {
	var h handOff
	if err := json.NewDecoder(r).Decode(&h); err != nil {
		return err
	}
	api, err := rayclient.New(rayclient.Config{Address: h.Address, Token: h.Token, Headers: h.Headers, CAFile: h.CAFile,
		CAPEM: h.CAPEM, InsecureSkipVerify: h.InsecureSkipVerify, RetryMax: -1})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), handOffBound)
	defer cancel()
	var wg sync.WaitGroup
	for _, id := range h.IDs {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			finishRecord(ctx, api, id, handOffTiming)
		}(id)
	}
	wg.Wait()
	return nil
}

// finishRecord deletes job id's record once its job is over and Ray's
// monitor has settled it, then once more after Ray may have written it back.
func finishRecord(ctx context.Context, api JobAPI, id string, timing RunTiming) {
	if !waitTerminal(ctx, api, id, timing.TerminalWait) || !sleepCtx(ctx, timing.RecordSettle) {
		return
	}
	deleteUnlessLiveNote(ctx, api, id)
	if sleepCtx(ctx, timing.WriteBackCheck) {
		deleteUnlessLiveNote(ctx, api, id)
	}
}

// deleteUnlessLiveNote deletes job id's record, unless it is a live
// ownership note (one a later import just wrote): of a note, only the copy
// Ray's monitor wrote back after the owner's destroy removed it goes.
func deleteUnlessLiveNote(ctx context.Context, api JobAPI, id string) {
	if j, err := api.GetJob(ctx, id); err != nil || (strings.HasPrefix(id, transferPrefix) && !writtenBack(j)) {
		return
	}
	_, _ = deleteStopping(ctx, api, id)
}
