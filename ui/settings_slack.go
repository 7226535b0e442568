package ui

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/causeway/causeway/analyzer"
	"github.com/causeway/causeway/errcode"
	"github.com/causeway/causeway/slack"
)

// slackView is the Slack section: the connection and its sending status, and
// the form that (re)connects it. The token and signing secret fields are
// always empty: they are write-only.
type slackView struct {
	Integration *slack.View
	Channel     string
	MinSeverity string
	Categories  string
	Severities  []string
	Known       string
}

func slackRoutes(d *Dashboard, g *gin.RouterGroup) {
	g.GET("", d.slackSettings)
	g.POST("", d.connectSlack)
	g.POST("/test", d.testSlack)
	g.POST("/delete", d.disconnectSlack)
}

func (d *Dashboard) slackSettings(c *gin.Context) {
	d.showSlack(c, http.StatusOK, slackView{MinSeverity: "info"}, nil)
}

func (d *Dashboard) showSlack(c *gin.Context, status int, v slackView, prob *problem) {
	integ, err := d.o.Slack.Get(c.Request.Context(), principal(c))
	if e, ok := errcode.As(err); err != nil && (!ok || e.Code != errcode.NotFound) {
		d.fail(c, err)
		return
	}
	v.Integration = integ
	if integ != nil && v.Channel == "" {
		v.Channel, v.MinSeverity, v.Categories = integ.Channel, integ.Notify.MinSeverity, strings.Join(integ.Notify.Categories, ", ")
	}
	v.Severities = []string{"critical", "high", "medium", "low", "info"}
	v.Known = strings.Join(analyzer.Categories, ", ")
	d.settingsPage(c, status, "slack", "Slack", v, prob)
}

func (d *Dashboard) connectSlack(c *gin.Context) {
	v := slackView{Channel: c.PostForm("channel"), MinSeverity: c.PostForm("minSeverity"), Categories: c.PostForm("categories")}
	in := slack.PutInput{BotToken: c.PostForm("botToken"), SigningSecret: c.PostForm("signingSecret"), Channel: v.Channel,
		Notify: &slack.Notify{MinSeverity: v.MinSeverity}}
	for _, cat := range strings.Split(v.Categories, ",") {
		if cat = strings.TrimSpace(cat); cat != "" {
			in.Notify.Categories = append(in.Notify.Categories, cat)
		}
	}
	if _, err := d.o.Slack.Put(c.Request.Context(), principal(c), in); err != nil {
		prob := problemOf(c, err)
		d.showSlack(c, prob.Status, v, prob)
		return
	}
	redirectNotice(c, Prefix+"/settings/slack", "slack-on")
}

func (d *Dashboard) testSlack(c *gin.Context) {
	if _, err := d.o.Slack.SendTest(c.Request.Context(), principal(c)); err != nil {
		prob := problemOf(c, err)
		d.showSlack(c, prob.Status, slackView{}, prob)
		return
	}
	redirectNotice(c, Prefix+"/settings/slack", "slack-test")
}

func (d *Dashboard) disconnectSlack(c *gin.Context) {
	if err := d.o.Slack.Delete(c.Request.Context(), principal(c)); err != nil {
		d.fail(c, err)
		return
	}
	redirectNotice(c, Prefix+"/settings/slack", "deleted")
}
