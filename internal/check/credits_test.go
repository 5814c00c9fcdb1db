package check_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mediamock/mediamock/internal/check"
)

func TestCreditsBalance(t *testing.T) {
	t.Run("consecutive calls of one workspace", func(t *testing.T) {
		k := newChecker(t)
		assert.Empty(t, begin(k, "mk_a_key_0001", "GET", "/account", "").end(200, account(1, 100)))
		assert.Empty(t, begin(k, "mk_a_key_0001", "POST", "/generations", genBody).end(201, created(10, 8, 92)))
		assert.Equal(t, []string{"credits.balance $.credits_balance"}, begin(k, "mk_a_key_0001", "POST", "/generations", genBody).end(201, created(11, 8, 80)))
		assert.Equal(t, 2, applied(k, check.RuleBalance))
	})
	t.Run("two creations in flight at once are not compared", func(t *testing.T) {
		k := newChecker(t)
		begin(k, "mk_a_key_0001", "GET", "/account", "").end(200, account(1, 100))
		a := begin(k, "mk_a_key_0001", "POST", "/generations", genBody)
		b := begin(k, "mk_a_key_0001", "POST", "/generations", genBody)
		assert.Empty(t, b.end(201, created(11, 8, 84)))
		assert.Empty(t, a.end(201, created(10, 8, 92)))
		assert.Zero(t, applied(k, check.RuleBalance))
	})
	t.Run("a credential of an unknown workspace may spend in between", func(t *testing.T) {
		k := newChecker(t)
		begin(k, "mk_a_key_0001", "GET", "/account", "").end(200, account(1, 100))
		begin(k, "mk_other_key_02", "POST", "/generations", genBody).end(201, created(10, 8, 92))
		assert.Empty(t, begin(k, "mk_a_key_0001", "POST", "/generations", genBody).end(201, created(11, 8, 84)))
		assert.Zero(t, applied(k, check.RuleBalance))
	})
	t.Run("another known workspace spends without interfering", func(t *testing.T) {
		k := newChecker(t)
		begin(k, "mk_a_key_0001", "GET", "/account", "").end(200, account(1, 100))
		begin(k, "mk_b_key_0002", "GET", "/account", "").end(200, account(2, 50))
		begin(k, "mk_b_key_0002", "POST", "/generations", genBody).end(201, created(10, 8, 42))
		assert.Equal(t, []string{"credits.balance $.credits_balance"}, begin(k, "mk_a_key_0001", "POST", "/generations", genBody).end(201, created(11, 8, 91)))
	})
	t.Run("a running job may be refunded: a higher balance passes", func(t *testing.T) {
		k := newChecker(t)
		begin(k, "mk_a_key_0001", "GET", "/account", "").end(200, account(1, 100))
		begin(k, "mk_a_key_0001", "POST", "/generations", genBody).end(201, created(10, 8, 92))
		// job 10 failed and was refunded meanwhile: 92 + 8 - 8
		assert.Empty(t, begin(k, "mk_a_key_0001", "POST", "/generations", genBody).end(201, created(11, 8, 92)))
		// a lower balance is never a refund
		assert.Equal(t, []string{"credits.balance $.credits_balance"}, begin(k, "mk_a_key_0001", "POST", "/generations", genBody).end(201, created(12, 8, 70)))
	})
	t.Run("a gift charges nothing", func(t *testing.T) {
		k := newChecker(t)
		body := strings.Replace(created(10, 3, 100), `"covered_by_monthly_gift": false`, `"covered_by_monthly_gift": true`, 1)
		assert.Equal(t, []string{"credits.gift $.credits_charged"}, begin(k, "mk_a_key_0001", "POST", "/generations", genBody).end(201, body))
	})
}
