package events

// FeedHeld counts the events a Feed's ring holds.
var FeedHeld = (*Feed).held
